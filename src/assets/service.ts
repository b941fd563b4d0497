import { randomBytes } from 'node:crypto';
import { pipeline, Readable } from 'node:stream';
import { fileTypeFromBuffer } from 'file-type';
import { imageSize } from 'image-size';
import { AccountRepository } from '../accounts/repository.js';
import type { Database } from '../db/database.js';
import { badRequest, notFound } from '../errors.js';
import type { PreparedList } from '../filters/list.js';
import { ListCache, listETag } from '../filters/list-cache.js';
import { parseListQuery } from '../filters/parse.js';
import type { BlobStore } from '../storage/blob-store.js';
import { MeasuringStream } from '../storage/measure.js';
import { listedEntry, toEntry } from './entry.js';
import { AssetRepository, type AssetChanges, type AssetRow } from './repository.js';
import { checkFolder, checkName, checkUrl, detectType, parseDimension, parseFormBoolean, type DetectedType } from './rules.js';
import { assetCatalogue, FORM_FILE_FIELD, FORM_TEXT_FIELDS, TYPE_FLAGS, type AssetEntry, type TypeFlags } from './schema.js';

/** Bytes already in the blob store, journalled, and not yet pointed at by any asset. */
export interface StagedBlob {
  key: string;
  size: number;
  etag: string;
  /** The first bytes, for sniffing the type and reading image dimensions. */
  head: Buffer;
}

/** A create or update request, once its multipart form is read. */
export interface AssetForm {
  /** Text fields by name, `content` included. */
  fields: Map<string, string>;
  /** The uploaded `file`, already staged. */
  file?: StagedBlob & { filename: string };
}

/** The text fields of the form (schema.ts); the file comes apart, already staged. */
const WRITABLE_FIELDS: ReadonlySet<string> = new Set(FORM_TEXT_FIELDS);
const READ_ONLY_FIELDS = new Set(['id', 'created_at', 'updated_at']);
/** Enough of the head for file-type (4 KiB) and for JPEG dimensions behind large EXIF blocks. */
export const HEAD_BYTES = 512 * 1024;

const nowSeconds = () => Math.floor(Date.now() / 1000);

/**
 * The rules of assets. Bytes and rows move together: bytes are written under a
 * new key and journalled first, the row is committed pointing at them (the same transaction
 * takes the journal entry away), and bytes a row stopped using are journalled in that
 * transaction and deleted after it. A crash at any moment leaves the old asset or the new one
 * whole; journalled bytes that no row uses are swept at start. docs/api.md, "Assets" (with its
 * "Forms" and "Durability"), has the rules as a user sees them.
 */
export class AssetService {
  private readonly assets: AssetRepository;
  private readonly lists = new ListCache();
  /** Account handles never change once made, so each is read once per process. */
  private readonly handles = new Map<number, string>();

  constructor(
    private readonly database: Database,
    private readonly blobs: BlobStore,
  ) {
    this.assets = new AssetRepository(database.db);
  }

  /**
   * One page of the account's assets matching the query string's filters, each entry as JSON
   * text (AssetEntry). The query is checked at once; `read` reads the page.
   */
  list(accountId: number, dataVersion: number, query: Record<string, string | string[] | undefined>, publicUrl: string): PreparedList {
    const listQuery = parseListQuery(query, assetCatalogue);
    return {
      // Entries carry absolute URLs: under another PUBLIC_URL the same page has other bytes.
      etag: listETag('assets', accountId, dataVersion, listQuery, publicUrl),
      read: async () => {
        const facts = this.lists.lookup('assets', accountId, dataVersion, listQuery);
        const page = await this.assets.listJson({ accountId, query: listQuery, facts });
        const base = await this.publicBase(accountId, publicUrl);
        const { entries, ...counts } = page;
        return { ...counts, entriesJson: entries.map((asset) => listedEntry(asset, base)).join(',') };
      },
    };
  }

  async get(accountId: number, id: number, publicUrl: string): Promise<AssetEntry> {
    const row = await this.assets.find(accountId, id);
    if (!row) throw notFound(`there is no asset with id ${id}`);
    return toEntry(row, await this.publicBase(accountId, publicUrl));
  }

  /** The row of an asset whose bytes are to be served; 404 when it is not the account's. */
  async forDownload(accountId: number, id: number): Promise<AssetRow> {
    const row = await this.assets.find(accountId, id);
    if (!row) throw notFound(`there is no asset with id ${id}`);
    return row;
  }

  /** The row behind a public URL, or undefined; only local assets are delivered publicly. */
  async forPublicDelivery(handle: string, publicId: string): Promise<AssetRow | undefined> {
    const row = await this.assets.findPublic(handle, publicId);
    return row?.blob_key ? row : undefined;
  }

  /** Streams bytes into the blob store under a new, journalled key. */
  async stage(accountId: number, source: Readable): Promise<StagedBlob> {
    const key = `${accountId}/${randomBytes(16).toString('hex')}`;
    await this.assets.journalBlob(key, nowSeconds()).catch((error) => this.refuseWhenBusy(error));
    const measure = new MeasuringStream(HEAD_BYTES);
    // pipeline() passes a source's failure on, even one that failed before it got here (a form
    // cut short): the put then fails too, where pipe() would wait forever.
    const measured = pipeline(source, measure, () => {});
    try {
      await this.blobs.put(key, measured);
    } catch (error) {
      source.destroy();
      await this.discard(key);
      throw error;
    }
    return { key, size: measure.size, etag: measure.digest().slice(0, 32), head: measure.head };
  }

  /**
   * Removes bytes that will not be used. It never fails the request it ends: bytes it cannot
   * remove now (the store or the database unavailable, or busy) stay on the journal, and the
   * sweep removes them (sweepOrphanedBlobs).
   */
  async discard(key: string): Promise<void> {
    try {
      await this.blobs.delete(key);
      await this.assets.forgetBlob(key);
    } catch {
      // Left journalled for the sweep.
    }
  }

  async create(accountId: number, form: AssetForm): Promise<number> {
    let staged: StagedBlob | undefined = form.file;
    try {
      const { fields } = form;
      checkFields(fields, 'create');
      const sources = ['content', 'url'].filter((name) => fields.has(name)).length + (form.file ? 1 : 0);
      if (sources !== 1) throw badRequest('give exactly one of content, file or url');
      const name = checkName(fields.get('name') ?? form.file?.filename ?? throwRequired('name'));
      const folder = checkFolder(fields.get('folder') ?? '');
      const url = fields.has('url') ? checkUrl(fields.get('url')!) : null;
      if (fields.has('content')) staged = await this.stage(accountId, Readable.from([Buffer.from(fields.get('content')!, 'utf8')]));
      const detected = await detect(name, staged, fields.has('content'));
      const now = nowSeconds();
      const id = await this.commit(
        accountId,
        async (repository) =>
          repository.insert({
            account_id: accountId,
            created_at: now,
            updated_at: now,
            name,
            folder,
            ...describe(fields, detected, staged, { async: false, defer: false }),
            url,
            public_id: randomBytes(12).toString('hex'),
          }),
        { name, folder },
        staged?.key,
      );
      staged = undefined;
      return id;
    } finally {
      if (staged) await this.discard(staged.key);
    }
  }

  async update(accountId: number, id: number, form: AssetForm): Promise<void> {
    let staged: StagedBlob | undefined = form.file;
    try {
      const { fields } = form;
      checkFields(fields, 'update');
      if (fields.size === 0 && !form.file) throw badRequest('the form is empty: send the fields to change');
      const count = fields.size + (form.file ? 1 : 0);
      if (fields.has('name') && count > 1) throw badRequest('a rename sends only name; send other changes in another request');
      if (fields.has('folder') && count > 1) throw badRequest('a move sends only folder; send other changes in another request');
      const sources = ['content', 'url'].filter((name) => fields.has(name)).length + (form.file ? 1 : 0);
      if (sources > 1) throw badRequest('give at most one of content, file or url');
      if (fields.has('content')) staged = await this.stage(accountId, Readable.from([Buffer.from(fields.get('content')!, 'utf8')]));

      // The changes are made of the row as read, and written only if it is still so: an update
      // that another one overtook is made again of the row that one left, so that both are kept.
      for (let attempt = 1; ; attempt++) {
        const row = await this.assets.find(accountId, id);
        if (!row) throw badRequest(`there is no asset with id ${id}`);
        const { changes, clash } = await this.changesTo(row, fields, staged);
        const replacedKey = changes.blob_key !== undefined ? row.blob_key : undefined;
        try {
          await this.commit(
            accountId,
            async (repository) => {
              if (!(await repository.update(row, { ...changes, updated_at: nowSeconds() }))) throw new AssetChanged();
              if (replacedKey) await repository.journalBlob(replacedKey, nowSeconds());
            },
            clash,
            staged?.key,
          );
        } catch (error) {
          if (!(error instanceof AssetChanged)) throw error;
          if (attempt === MAX_UPDATE_ATTEMPTS) throw badRequest('the asset kept changing while this update was being made; send it again');
          continue;
        }
        staged = undefined;
        if (replacedKey) await this.discard(replacedKey);
        return;
      }
    } finally {
      if (staged) await this.discard(staged.key);
    }
  }

  /** What an update's fields change of `row` (bytes already staged), and the name and folder it would take. */
  private async changesTo(row: AssetRow, fields: Map<string, string>, staged: StagedBlob | undefined) {
    const clash = { name: row.name, folder: row.folder };
    if (fields.has('name')) {
      clash.name = checkName(fields.get('name')!);
      return { changes: { name: clash.name } as AssetChanges, clash };
    }
    if (fields.has('folder')) {
      clash.folder = checkFolder(fields.get('folder')!);
      if (!(await this.assets.folderExists(row.account_id, clash.folder))) {
        throw badRequest(`folder "${clash.folder}" does not exist; a folder exists while it or a folder below it holds an asset`);
      }
      return { changes: { folder: clash.folder } as AssetChanges, clash };
    }
    const url = fields.has('url') ? checkUrl(fields.get('url')!) : undefined;
    if (staged === undefined && url === undefined) return { changes: describeAttributes(fields, row), clash };
    const detected = await detect(row.name, staged, fields.has('content'));
    return { changes: { ...describe(fields, detected, staged, { async: row.async === 1, defer: row.defer === 1 }), url: url ?? null } as AssetChanges, clash };
  }

  async remove(accountId: number, id: number): Promise<void> {
    // The bytes to remove are those the row had as it was deleted, not as an earlier read saw them:
    // a replacement committed in between must not leave its bytes behind.
    const removedKey = await this.commit(accountId, async (repository) => {
      const removed = await repository.delete(accountId, id);
      if (!removed) throw badRequest(`there is no asset with id ${id}`);
      if (removed.blob_key) await repository.journalBlob(removed.blob_key, nowSeconds());
      return removed.blob_key;
    });
    if (removedKey) await this.discard(removedKey);
  }

  /**
   * Deletes bytes that no asset uses: left by a crash between writing bytes and committing
   * their row, or between committing a replacement or delete and removing the old bytes.
   * Only entries older than `graceSeconds` are swept, so that another instance's upload in
   * flight is left alone.
   */
  async sweepOrphanedBlobs(graceSeconds: number): Promise<number> {
    const orphans = await this.assets.orphanedBlobs(nowSeconds() - graceSeconds + 1);
    let swept = 0;
    for (const key of orphans) if (await this.sweepOrphan(key)) swept++;
    return swept;
  }

  /**
   * Deletes the bytes while the transaction holds their journal entry: a commit racing for the
   * same entry then finds it gone and fails, rather than committing a row whose bytes are gone.
   */
  private async sweepOrphan(key: string): Promise<boolean> {
    return this.database.db.transaction().execute(async (trx) => {
      if (!(await new AssetRepository(trx).claimOrphan(key))) return false;
      await this.blobs.delete(key);
      return true;
    });
  }

  /**
   * Runs `work` in a transaction that also takes `stagedKey` off the journal and marks the
   * account's data changed, turning a unique (folder, name) clash into a 400.
   */
  private async commit<T>(
    accountId: number,
    work: (repository: AssetRepository) => Promise<T>,
    clash?: { name: string; folder: string },
    stagedKey?: string,
  ): Promise<T> {
    try {
      return await this.database.db.transaction().execute(async (trx) => {
        const repository = new AssetRepository(trx);
        const result = await work(repository);
        await new AccountRepository(trx).bumpDataVersion(accountId);
        if (stagedKey && !(await repository.forgetBlob(stagedKey))) {
          throw badRequest('the upload took so long that its bytes were discarded; send it again');
        }
        return result;
      });
    } catch (error) {
      if (clash && this.database.isUniqueViolation(error)) {
        throw badRequest(`an asset named "${clash.name}" already exists in ${clash.folder === '' ? 'the root folder' : `folder "${clash.folder}"`}`);
      }
      return this.refuseWhenBusy(error);
    }
  }

  /** A write that waited out another writer (an import, on SQLite) is refused, to be sent again. */
  private refuseWhenBusy(error: unknown): never {
    if (this.database.isBusy(error))
      throw badRequest('the database is busy with another write, such as a conversions import; send this again once it has finished');
    throw error;
  }

  private async publicBase(accountId: number, publicUrl: string): Promise<string> {
    let handle = this.handles.get(accountId);
    if (handle === undefined) {
      handle = await this.assets.handleOf(accountId);
      if (this.handles.size >= MAX_CACHED_HANDLES) this.handles.clear();
      this.handles.set(accountId, handle);
    }
    return `${publicUrl}/public/${handle}/`;
  }
}

const MAX_CACHED_HANDLES = 10_000;
// Enough for an update overtaken by a few others at once; one overtaken again and again is refused.
const MAX_UPDATE_ATTEMPTS = 5;

/** Thrown in an update's transaction when the row is no longer as the update read it. */
class AssetChanged extends Error {}

function throwRequired(field: string): never {
  throw badRequest(`${field} is required`);
}

function checkFields(fields: Map<string, string>, operation: 'create' | 'update'): void {
  for (const name of fields.keys()) checkFieldName(name, operation);
}

/** A text field's name is one of the writable fields; the form reader judges each part by it before reading its value. */
export function checkFieldName(name: string, operation: 'create' | 'update'): void {
  if (READ_ONLY_FIELDS.has(name)) throw badRequest(`${name} cannot be ${operation === 'create' ? 'set' : 'updated'}`);
  if (!WRITABLE_FIELDS.has(name)) throw badRequest(`unknown field ${name}; the fields are ${[...WRITABLE_FIELDS, FORM_FILE_FIELD].join(', ')}`);
}

async function detect(name: string, staged: StagedBlob | undefined, fromContent: boolean): Promise<DetectedType & { head?: Buffer }> {
  if (!staged) return detectType(name, undefined);
  const sniffed = staged.size > 0 ? await fileTypeFromBuffer(staged.head) : undefined;
  return { ...detectType(name, { sniffedMime: sniffed?.mime, fromContent }), head: staged.head };
}

/** Flags given in the form win over detected ones, one by one. */
function flagsFrom(fields: Map<string, string>, detected: TypeFlags): TypeFlags {
  const flags = { ...detected };
  for (const flag of TYPE_FLAGS) if (fields.has(flag)) flags[flag] = parseFormBoolean(flag, fields.get(flag)!);
  return flags;
}

/** Width and height: given values win, else read from an image's bytes; null for non-images. */
function dimensionsFrom(fields: Map<string, string>, isImage: boolean, head: Buffer | undefined) {
  const given = {
    width: fields.has('width') ? parseDimension('width', fields.get('width')!) : undefined,
    height: fields.has('height') ? parseDimension('height', fields.get('height')!) : undefined,
  };
  if (!isImage) {
    if (given.width !== undefined || given.height !== undefined) throw badRequest('width and height are accepted only for images');
    return { width: null, height: null };
  }
  const read = head ? readDimensions(head) : undefined;
  return { width: given.width ?? read?.width ?? null, height: given.height ?? read?.height ?? null };
}

function readDimensions(head: Buffer): { width: number; height: number } | undefined {
  try {
    const { width, height } = imageSize(head);
    return width && height ? { width, height } : undefined;
  } catch {
    return undefined; // not an image type image-size knows, or not enough of it
  }
}

const bit = (value: boolean) => (value ? 1 : 0);

/** The columns describing an asset's bytes (or remote address) and what it is. */
function describe(
  fields: Map<string, string>,
  detected: DetectedType & { head?: Buffer },
  staged: StagedBlob | undefined,
  defaults: { async: boolean; defer: boolean },
) {
  const flags = flagsFrom(fields, detected.flags);
  const { width, height } = dimensionsFrom(fields, flags.image, detected.head);
  return {
    image: bit(flags.image),
    video: bit(flags.video),
    script: bit(flags.script),
    style: bit(flags.style),
    text: bit(flags.text),
    width,
    height,
    async: bit(fields.has('async') ? parseFormBoolean('async', fields.get('async')!) : defaults.async),
    defer: bit(fields.has('defer') ? parseFormBoolean('defer', fields.get('defer')!) : defaults.defer),
    blob_key: staged?.key ?? null,
    size: staged?.size ?? null,
    content_type: staged ? (detected.contentType ?? 'application/octet-stream') : null,
    etag: staged?.etag ?? null,
  };
}

/** An update of attributes only: flags, async, defer, width, height. */
function describeAttributes(fields: Map<string, string>, row: AssetRow): AssetChanges {
  const current: TypeFlags = { image: row.image === 1, video: row.video === 1, script: row.script === 1, style: row.style === 1, text: row.text === 1 };
  const flags = flagsFrom(fields, current);
  const changes: AssetChanges = {};
  for (const flag of TYPE_FLAGS) changes[flag] = bit(flags[flag]);
  if (fields.has('async')) changes.async = bit(parseFormBoolean('async', fields.get('async')!));
  if (fields.has('defer')) changes.defer = bit(parseFormBoolean('defer', fields.get('defer')!));
  if (fields.has('width') || fields.has('height') || !flags.image) {
    const given = dimensionsFrom(fields, flags.image, undefined);
    changes.width = fields.has('width') || !flags.image ? given.width : row.width;
    changes.height = fields.has('height') || !flags.image ? given.height : row.height;
  }
  return changes;
}
