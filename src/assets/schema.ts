import { Type, type Static, type TSchema } from 'typebox';
import { catalogueFromSchema } from '../filters/catalogue.js';

const nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

/** An uploaded image: the example of the OpenAPI document. */
const EXAMPLE = {
  id: 12,
  created_at: '2026-11-20T14:03:11Z',
  updated_at: '2026-11-21T09:45:02Z',
  name: 'hero.png',
  folder: 'landing/v2',
  image: true,
  video: false,
  script: false,
  style: false,
  text: false,
  width: 1200,
  height: 630,
  url: null,
  async: false,
  defer: false,
  size: 84213,
  content_type: 'image/png',
  public_url: 'https://acds.example.com/public/3f9c2a71d04be815/5b0e9d2c7a41f8863e10c4d2',
};

/**
 * An asset as the API returns it (docs/api.md, "Assets"): every field is always present, `null`
 * when unknown or not applicable (width and height of a non-image, url of a local asset).
 */
export const AssetEntry = Type.Object(
  {
    id: Type.Integer(),
    created_at: Type.String({ format: 'date-time', description: 'RFC 3339, UTC, second precision' }),
    updated_at: Type.String({ format: 'date-time', description: 'RFC 3339, UTC, second precision' }),
    name: Type.String({ description: 'Unique within its folder' }),
    folder: Type.String({ description: 'Folder path, names joined by /; "" is the root' }),
    image: Type.Boolean(),
    video: Type.Boolean(),
    script: Type.Boolean(),
    style: Type.Boolean(),
    text: Type.Boolean(),
    width: nullable(Type.Integer({ description: 'Pixels, for images' })),
    height: nullable(Type.Integer({ description: 'Pixels, for images' })),
    url: nullable(
      Type.String({ description: 'The remote address of a remote (hotlinked) asset, as the URL standard writes it (ASCII); null for a local one' }),
    ),
    async: Type.Boolean({ description: 'For scripts' }),
    defer: Type.Boolean({ description: 'For scripts' }),
    size: nullable(Type.Integer({ description: 'Bytes of a local asset; null for a remote one' })),
    content_type: nullable(Type.String({ description: 'Content type a local asset is served with' })),
    public_url: nullable(Type.String({ description: 'Where a web page can embed a local asset without a key; stable across renames and moves' })),
  },
  { additionalProperties: false, $id: 'AssetEntry', description: 'An asset, as lists show it', examples: [EXAMPLE] },
);
export type AssetEntry = Static<typeof AssetEntry>;

export const ASSET_FILTERS = [
  'id',
  'created_at',
  'updated_at',
  'name',
  'folder',
  'image',
  'video',
  'script',
  'style',
  'text',
  'width',
  'height',
  'url',
  'async',
  'defer',
] as const;

export const assetCatalogue = catalogueFromSchema(AssetEntry, ASSET_FILTERS);

export const TYPE_FLAGS = ['image', 'video', 'script', 'style', 'text'] as const;
export type TypeFlag = (typeof TYPE_FLAGS)[number];
export type TypeFlags = Record<TypeFlag, boolean>;

const formText = (description: string, example: string) => Type.Optional(Type.String({ description, examples: [example] }));
const formFlag = (description: string) => Type.Optional(Type.String({ enum: ['t', 'f', 'true', 'false'], description }));

/**
 * The multipart form that creates and updates an asset: its fields, each with what it takes.
 * The OpenAPI document shows it as the routes' body, and the form reader and the service accept
 * exactly these names: every field is text but the one uploaded file (format `binary`). Which
 * fields go together, and what their values may be, are the service's rules (service.ts, rules.ts).
 */
export const AssetFormFields = Type.Object({
  name: formText('1 to 255 characters, no /; required with content and url', 'hero.png'),
  content: formText('Text content; makes a local asset', 'body { color: teal }'),
  file: Type.Optional(Type.String({ format: 'binary', description: 'An uploaded file; makes a local asset' })),
  url: formText('Absolute http(s) address; makes a remote asset', 'https://cdn.example.com/videos/sales-letter.mp4'),
  width: formText('Pixels, for images', '1200'),
  height: formText('Pixels, for images', '630'),
  folder: formText('Folder path, names joined by /; "" is the root', 'landing/v2'),
  async: formFlag('For scripts'),
  defer: formFlag('For scripts'),
  image: formFlag('Overrides the detected type'),
  video: formFlag('Overrides the detected type'),
  script: formFlag('Overrides the detected type'),
  style: formFlag('Overrides the detected type'),
  text: formFlag('Overrides the detected type'),
});

/** Every field of the form, in the order declared. */
export const FORM_FIELDS: readonly string[] = Object.keys(AssetFormFields.properties);
const isUpload = (name: string) => (AssetFormFields.properties as Record<string, { format?: string }>)[name]!.format === 'binary';
/** The form's text fields, in the order declared. */
export const FORM_TEXT_FIELDS: readonly string[] = FORM_FIELDS.filter((name) => !isUpload(name));
/** The form's one uploaded file. */
export const FORM_FILE_FIELD: string = onlyOne(FORM_FIELDS.filter(isUpload));

function onlyOne(names: string[]): string {
  if (names.length !== 1) throw new Error(`the asset form has one file field, not ${names.length}`);
  return names[0]!;
}
