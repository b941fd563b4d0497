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
  conversion_imports: ConversionImportsTable;
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
  /** No conversion of the account has a larger id (ConversionRepository.bumpVersion). */
  newest_id: Generated<number>;
}

/** A committed import's rows, named by its advance copy's token (migration 0012). */
export interface ConversionImportsTable {
  token: string;
  first_id: number;
  last_id: number;
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

/**
 * A conversion as the system of record keeps it: what identifies and dates it, the value one
 * buyer's conversions are looked up by (indexed with the account), and its entry. Every
 * other field lives in the entry alone; the columnar index (src/db/columnar) reads the
 * filterable ones from it.
 */
export interface ConversionsTable {
  id: Generated<number>;
  account_id: number;
  /** Epoch seconds. */
  created_at: number;
  cart_integration: string;
  receipt: string;
  user_id: string | null;
  /** The entry as the API writes it, without its id (see entry-json.ts). */
  entry_json: string;
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
