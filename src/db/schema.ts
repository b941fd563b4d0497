import type { Generated } from 'kysely';

/**
 * The tables as Kysely sees them. One representation on both databases:
 * timestamps are integer epoch seconds, booleans are 0/1 integers, arrays are
 * JSON text (the columnar index, src/db/columnar, splits the filtered ones into rows).
 */
export interface DatabaseSchema {
  accounts: AccountsTable;
  api_keys: ApiKeysTable;
  conversions: ConversionsTable;
  conversions_identity: { identity: string };
  conversion_versions: ConversionVersionsTable;
  assets: AssetsTable;
  blob_journal: BlobJournalTable;
  cart_receivers: CartReceiversTable;
  cart_events: CartEventsTable;
}

export interface AccountsTable {
  id: Generated<number>;
  name: string;
  /** Non-secret public handle, used in public asset URLs. */
  handle: string;
  created_at: number;
  /**
   * Incremented by every transaction that changes the account's assets. With the account's
   * conversion_versions.version it makes the account's data version (AccountRepository.accountForKey).
   */
  data_version: Generated<number>;
}

/**
 * Incremented by every import into the account, beside the conversions: on SQLite in their file,
 * so that an import writes nothing to the main file and never holds its writer.
 */
export interface ConversionVersionsTable {
  account_id: number;
  version: number;
}

export interface ApiKeysTable {
  id: Generated<number>;
  account_id: number;
  /** The first characters of the key, shown in listings and used to revoke it. */
  prefix: string;
  /** SHA-256 of the whole key, hex. The key itself is never stored. */
  key_hash: string;
  created_at: number;
  revoked_at: number | null;
}

export interface ConversionsTable {
  id: Generated<number>;
  account_id: number;
  created_at: number;
  cart_integration: string;
  receipt: string;
  original_receipt: string | null;
  amount: number | null;
  tax_amount: number | null;
  shipping_amount: number | null;
  /** JSON array of {sku, price, qty}. */
  products: string;
  email: string | null;
  user_id: string | null;
  page_id: number | null;
  page_version: string | null;
  upsell_flow_id: string | null;
  upsell_session: string | null;
  upsell_path: string | null;
  upsell_group: string | null;
  upsell_step: number | null;
  country: string | null;
  mobile: number | null;
  affiliate: string | null;
  vendor: string | null;
  role: string | null;
  /** JSON array of strings, as returned; the columnar index keeps them one per row for filters. */
  tracking_codes: string;
  referrer: string | null;
  referrer_name: string | null;
  referrer_medium: string | null;
  joint_venture_order: string | null;
  currency: string | null;
  hostname: string | null;
  utm_source: string | null;
  utm_medium: string | null;
  utm_campaign: string | null;
  utm_content: string | null;
  first_name: string | null;
  last_name: string | null;
  zip_code: string | null;
  payment_method: string | null;
  /** JSON array of numbers. */
  affiliate_payouts: string;
  /** The entry as the API writes it, without its id (see entry-json.ts); null only before migration 0003 filled it. */
  entry_json: string | null;
}

export interface AssetsTable {
  id: Generated<number>;
  account_id: number;
  created_at: number;
  updated_at: number;
  name: string;
  folder: string;
  image: number;
  video: number;
  script: number;
  style: number;
  text: number;
  width: number | null;
  height: number | null;
  url: string | null;
  async: number;
  defer: number;
  blob_key: string | null;
  size: number | null;
  content_type: string | null;
  etag: string | null;
  public_id: string;
  /** The entry as the API writes it but for id and public_url (src/assets/entry.ts). */
  entry_json: string;
}

export interface BlobJournalTable {
  blob_key: string;
  created_at: number;
}

/** A cart connected to an account (src/carts). */
export interface CartReceiversTable {
  id: Generated<number>;
  account_id: number;
  /** The receiver's name: a cart, or `generic`. */
  cart: string;
  /** SHA-256 of the URL token, hex. The token itself is never stored. */
  token_hash: string;
  /** The token's first characters, shown in listings. */
  token_prefix: string;
  /** The cart's own secret where it signs or encrypts (ClickBank's secret key, the IPN passphrase, the webhook secret). */
  secret: string | null;
  created_at: number;
}

/** A notification a receiver accepted, whatever it was about. */
export interface CartEventsTable {
  id: Generated<number>;
  account_id: number;
  received_at: number;
  occurred_at: number | null;
  /** The receiver it came through. */
  cart: string;
  /** Unique per account and receiver: a repeat of a notification has the same key. */
  event_key: string;
  event: string;
  cart_event: string;
  receipt: string | null;
  original_receipt: string | null;
  test: number;
  /** converted, recorded, test, ignored or failed (src/carts/service.ts). */
  status: string;
  problem: string | null;
  conversion_id: number | null;
  payload: string;
}
