import { type FileInput, formOf } from './multipart.js';
import { chunksOf } from './streams.js';
import type { components, operations } from './openapi.js';
import { AcdsError, isRedirect, type QueryValue, type RequestOptions, Transport, type TransportOptions } from './transport.js';

/** A conversion as the API writes it. */
export type ConversionEntry = components['schemas']['ConversionEntry'];
/** An asset as the API writes it. */
export type AssetEntry = components['schemas']['AssetEntry'];
/** A cart notification as the API writes it. */
export type CartEventEntry = components['schemas']['CartEventEntry'];
/** A connected cart as the API writes it: its receiver's path shows only the token's first characters. */
export type CartReceiverEntry = components['schemas']['CartReceiverEntry'];
/** The answer of a conversion summary. */
export type ConversionSummary = operations['summarizeConversions']['responses'][200]['content']['application/json'];

type QueryOf<Operation extends keyof operations> = operations[Operation] extends { parameters: { query?: infer Query } } ? NonNullable<Query> : never;
/** The list's filters: one property a query parameter, `amount.gte`, `cart_integration.in`, ... typed as the column. */
export type ConversionFilters = Omit<QueryOf<'listConversions'>, 'page'>;
export type AssetFilters = Omit<QueryOf<'listAssets'>, 'page'>;
export type CartEventFilters = Omit<QueryOf<'listCartEvents'>, 'page'>;
/** What a summary groups by, and in which time zone. */
export type SummaryOptions = Omit<QueryOf<'summarizeConversions'>, keyof ConversionFilters> & RequestOptions;
type ConversionPage = operations['listConversions']['responses'][200]['content']['application/json'];
/** One page of a list, as the API answers it: every list has the conversions' envelope, with its own entries. */
export type Page<Entry> = Omit<ConversionPage, 'entries'> & { entries: Entry[] };

type FormFields = NonNullable<operations['createAsset']['requestBody']>['content']['multipart/form-data'];
type Flag = 'async' | 'defer' | 'image' | 'video' | 'script' | 'style' | 'text';
/**
 * An asset's fields as the form takes them, with numbers and flags as numbers and booleans:
 * `content` (text), `file` or `url` makes the asset; `fileName` names an uploaded file (default:
 * the File's or the path's own name).
 */
export type AssetFields = Omit<FormFields, 'file' | 'width' | 'height' | Flag> & {
  file?: FileInput;
  fileName?: string;
  width?: number;
  height?: number;
} & Partial<Record<Flag, boolean>>;

export type AcdsClientOptions = TransportOptions;

const API = '/api/v1';
/** How often an NDJSON export that breaks part way is resumed from its last entry. */
const EXPORT_RESUMES = 2;

/**
 * The acds API: `new AcdsClient({ baseUrl, apiKey })`, then `client.conversions`, `client.assets`,
 * `client.cartEvents` and `client.cartReceivers`. Lists are async iterables over every matching
 * entry; failures are AcdsErrors.
 */
export class AcdsClient {
  readonly conversions: Conversions;
  readonly assets: Assets;
  readonly cartEvents: Listing<CartEventEntry, CartEventFilters>;
  readonly cartReceivers: CartReceivers;

  constructor(options: AcdsClientOptions) {
    const transport = new Transport(options);
    this.conversions = new Conversions(transport);
    this.assets = new Assets(transport);
    this.cartEvents = new Listing(transport, `${API}/cart-events`);
    this.cartReceivers = new CartReceivers(transport);
  }
}

type Query = Record<string, QueryValue>;

/** One of the API's lists: every matching entry, walked by id, and one page at a time. */
class Listing<Entry extends { id: number }, Filters> {
  constructor(
    protected readonly transport: Transport,
    protected readonly path: string,
  ) {}

  /**
   * Every entry matching `filters`, in ascending id order: each page asked as page 1 of the
   * entries after the last id received (`id.gt`), which the service answers as fast at the
   * millionth entry as at the first, and which never skips or repeats an entry while new ones
   * arrive. An `id.gt` of the filters is where the walk starts.
   */
  async *list(filters?: Filters, options: RequestOptions = {}): AsyncGenerator<Entry> {
    const query = { ...(filters as Query) };
    for (;;) {
      const page = await this.transport.json<Page<Entry>>({ ...options, method: 'GET', path: this.path, query: { ...query, page: 1 } });
      yield* page.entries;
      if (page.totalPages <= 1) return;
      query['id.gt'] = page.entries.at(-1)!.id;
    }
  }

  /** Page `page` (from 1) of the entries matching `filters`, with the exact total. */
  page(filters?: Filters, page = 1, options?: RequestOptions): Promise<Page<Entry>> {
    return this.transport.json({ ...options, method: 'GET', path: this.path, query: { ...(filters as Query), page } });
  }
}

class Conversions extends Listing<ConversionEntry, ConversionFilters> {
  constructor(transport: Transport) {
    super(transport, `${API}/conversions`);
  }

  /** Sums of the conversions matching `filters`, by up to three keys (`group_by`), time buckets in `tz`. */
  summary(filters: ConversionFilters = {}, { group_by, tz, ...options }: SummaryOptions = {}): Promise<ConversionSummary> {
    return this.transport.json({ ...options, method: 'GET', path: `${API}/conversions/summary`, query: { ...(filters as Query), group_by, tz } });
  }

  /**
   * Every conversion matching `filters` in one streamed request: entries (NDJSON) or the CSV's
   * text a chunk at a time. An NDJSON download that breaks part way goes on from the last
   * entry received, up to EXPORT_RESUMES times.
   */
  export(filters: ConversionFilters, options: { format: 'csv' } & RequestOptions): AsyncGenerator<string>;
  export(filters?: ConversionFilters, options?: { format?: 'ndjson' } & RequestOptions): AsyncGenerator<ConversionEntry>;
  export(
    filters: ConversionFilters = {},
    { format = 'ndjson', ...options }: { format?: 'ndjson' | 'csv' } & RequestOptions = {},
  ): AsyncGenerator<ConversionEntry | string> {
    return format === 'csv' ? this.csv(filters as Query, options) : this.ndjson(filters as Query, options);
  }

  private async *csv(filters: Query, options: RequestOptions): AsyncGenerator<string> {
    const response = await this.transport.send({ ...options, method: 'GET', path: `${API}/conversions/export`, query: { ...filters, format: 'csv' } });
    yield* textOf(response);
  }

  private async *ndjson(filters: Query, options: RequestOptions): AsyncGenerator<ConversionEntry> {
    let after = filters['id.gt'];
    for (let resumed = 0; ; resumed++) {
      const response = await this.transport.send({
        ...options,
        method: 'GET',
        path: `${API}/conversions/export`,
        query: { ...filters, 'id.gt': after, format: 'ndjson' },
      });
      try {
        for await (const line of linesOf(textOf(response))) {
          const entry = JSON.parse(line) as ConversionEntry;
          after = entry.id;
          yield entry;
        }
        return;
      } catch (error) {
        // A broken stream, not a broken line: a line that is not JSON is not the network's doing.
        if (error instanceof SyntaxError || options.signal?.aborted || resumed >= EXPORT_RESUMES) throw error;
      }
    }
  }
}

class Assets extends Listing<AssetEntry, AssetFilters> {
  constructor(transport: Transport) {
    super(transport, `${API}/assets`);
  }

  get(id: number, options?: RequestOptions): Promise<AssetEntry> {
    return this.transport.json({ ...options, method: 'GET', path: `${API}/assets/${id}` });
  }

  /** Creates an asset from `content` (text), a `file` or a remote `url`, with its `name`, `folder` and flags; answers its id. */
  async create(fields: AssetFields, options?: RequestOptions): Promise<number> {
    const { id } = await this.transport.json<{ id: string }>({ ...options, method: 'POST', path: `${API}/assets`, ...(await this.form(fields)) });
    return Number(id);
  }

  /**
   * Changes an asset: a rename (`name` alone), a move (`folder` alone), new bytes (`content` or
   * `file`), a remote `url`, or its attributes; the API says which go together.
   */
  async update(id: number, fields: AssetFields, options?: RequestOptions): Promise<void> {
    const response = await this.transport.send({ ...options, method: 'PUT', path: `${API}/assets/${id}`, ...(await this.form(fields)) });
    await response.body?.cancel();
  }

  async delete(id: number, options?: RequestOptions): Promise<void> {
    const response = await this.transport.send({ ...options, method: 'DELETE', path: `${API}/assets/${id}` });
    await response.body?.cancel();
  }

  /** The asset's bytes; a remote asset's from its url, asked without the API key. */
  async content(id: number, options?: RequestOptions): Promise<Uint8Array> {
    const response = await this.transport.send({ ...options, method: 'GET', path: `${API}/assets/${id}/content`, answerRedirect: true });
    if (!isRedirect(response)) return new Uint8Array(await response.arrayBuffer());
    await response.body?.cancel();
    // A browser hides where an opaque redirect leads: the entry says.
    const url = response.headers.get('location') ?? (await this.get(id, options)).url;
    if (!url) throw new AcdsError(0, `asset ${id} redirected to no url`, undefined);
    return this.transport.fetchElsewhere(url, options?.signal);
  }

  /** The form of `fields`: numbers and flags as the text the form takes. */
  private form({ file, fileName, ...rest }: AssetFields) {
    const fields: Record<string, string> = {};
    for (const [name, value] of Object.entries(rest)) if (value !== undefined && value !== null) fields[name] = String(value);
    return formOf(fields, file, fileName);
  }
}

/** The carts connected to the account: a few at most, answered whole. */
class CartReceivers {
  constructor(private readonly transport: Transport) {}

  /** Every connected cart, by cart, with its receiver's path: only the token's first characters, never the token or the secret. */
  async list(options?: RequestOptions): Promise<CartReceiverEntry[]> {
    const { receivers } = await this.transport.json<operations['listCartReceivers']['responses'][200]['content']['application/json']>({
      ...options,
      method: 'GET',
      path: `${API}/cart-receivers`,
    });
    return receivers;
  }
}

/** A response's body as text, a chunk at a time. */
async function* textOf(response: Response): AsyncGenerator<string> {
  if (response.body) yield* chunksOf(response.body.pipeThrough(new TextDecoderStream()));
}

/** The lines of a text, however its chunks split them. */
async function* linesOf(chunks: AsyncIterable<string>): AsyncGenerator<string> {
  let rest = '';
  for await (const chunk of chunks) {
    const lines = (rest + chunk).split('\n');
    rest = lines.pop()!;
    for (const line of lines) if (line !== '') yield line;
  }
  if (rest !== '') yield rest;
}
