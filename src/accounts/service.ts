import type { Kysely } from 'kysely';
import type { DatabaseSchema } from '../db/schema.js';
import { AccountRepository, type Account } from './repository.js';
import { generateApiKey, generateHandle, hashApiKey, keyPrefix } from './keys.js';

export const DEFAULT_ACCOUNT = 'default';

export interface KeySummary {
  prefix: string;
  created_at: number;
  revoked_at: number | null;
}

const nowSeconds = () => Math.floor(Date.now() / 1000);

/** Accounts and their API keys; each key belongs to exactly one account (docs/api.md, "Authentication"). */
export class AccountService {
  private readonly accounts: AccountRepository;

  constructor(db: Kysely<DatabaseSchema>) {
    this.accounts = new AccountRepository(db);
  }

  ensureAccount(name: string): Promise<Account> {
    validateAccountName(name);
    return this.accounts.ensure(name, generateHandle(), nowSeconds());
  }

  /** The account of that name, made if it is new, and whether this call made it. */
  async findOrCreateAccount(name: string): Promise<{ id: number; created: boolean }> {
    const existing = await this.accounts.findByName(name);
    return existing ? { id: existing.id, created: false } : { id: (await this.ensureAccount(name)).id, created: true };
  }

  /** Creates a key for the account (and the account if it is new); the key is returned once. */
  async createKey(accountName: string): Promise<string> {
    const account = await this.ensureAccount(accountName);
    const key = generateApiKey();
    await this.accounts.addKey(account.id, keyPrefix(key), hashApiKey(key), nowSeconds());
    return key;
  }

  findAccount(name: string): Promise<{ id: number } | undefined> {
    return this.accounts.findByName(name);
  }

  async listKeys(accountName: string): Promise<KeySummary[]> {
    const account = await this.accounts.findByName(accountName);
    if (!account) throw new Error(`there is no account named ${accountName}`);
    const keys = await this.accounts.listKeys(account.id);
    return keys.map(({ prefix, created_at, revoked_at }) => ({ prefix, created_at, revoked_at }));
  }

  async revokeKey(prefix: string): Promise<void> {
    const keys = await this.accounts.keysWithPrefix(prefix);
    if (keys.length === 0) throw new Error(`no key starts with ${prefix}; 'keys list' shows the prefixes`);
    if (keys.length > 1) throw new Error(`${keys.length} keys share the prefix ${prefix}; revoke cannot tell which one`);
    await this.accounts.revokeKey(keys[0]!.id, nowSeconds());
  }

  /**
   * The account an active key belongs to, with the account's current data version and the id
   * none of its conversions lies above, or undefined for an unknown or revoked key.
   */
  async authenticate(key: string): Promise<{ accountId: number; dataVersion: number; newestConversionId: number } | undefined> {
    const row = await this.accounts.accountForKey(hashApiKey(key));
    return row && { accountId: row.account_id, dataVersion: row.data_version, newestConversionId: row.newest_conversion_id };
  }

  /**
   * First start: the account `default` exists, and accepts the operator's
   * bootstrap key if one is given; otherwise, if it never had a key (a fresh database, or one
   * only seeded so far), it gets one now, which is returned for printing once.
   */
  async bootstrap(bootstrapApiKey: string | undefined): Promise<string | undefined> {
    const account = await this.ensureAccount(DEFAULT_ACCOUNT);
    if (bootstrapApiKey) {
      await this.accounts.addKey(account.id, keyPrefix(bootstrapApiKey), hashApiKey(bootstrapApiKey), nowSeconds());
      return undefined;
    }
    const everHadKey = (await this.accounts.listKeys(account.id)).length > 0;
    return everHadKey ? undefined : this.createKey(DEFAULT_ACCOUNT);
  }
}

function validateAccountName(name: string): void {
  if (!/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/.test(name)) {
    throw new Error('an account name is 1 to 64 letters, digits, dots, dashes or underscores, starting with a letter or digit');
  }
}
