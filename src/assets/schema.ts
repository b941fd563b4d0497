import { Type, type Static, type TSchema } from 'typebox';
import { catalogueFromSchema } from '../filters/catalogue.js';

const nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

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
    url: nullable(Type.String({ description: 'The remote address of a remote (hotlinked) asset, as the URL standard writes it (ASCII); null for a local one' })),
    async: Type.Boolean({ description: 'For scripts' }),
    defer: Type.Boolean({ description: 'For scripts' }),
    size: nullable(Type.Integer({ description: 'Bytes of a local asset; null for a remote one' })),
    content_type: nullable(Type.String({ description: 'Content type a local asset is served with' })),
    public_url: nullable(
      Type.String({ description: 'Where a web page can embed a local asset without a key; stable across renames and moves' }),
    ),
  },
  { additionalProperties: false },
);
export type AssetEntry = Static<typeof AssetEntry>;

export const ASSET_FILTERS = [
  'id', 'created_at', 'updated_at', 'name', 'folder', 'image', 'video', 'script', 'style', 'text',
  'width', 'height', 'url', 'async', 'defer',
] as const;

export const assetCatalogue = catalogueFromSchema(AssetEntry, ASSET_FILTERS);

export const TYPE_FLAGS = ['image', 'video', 'script', 'style', 'text'] as const;
export type TypeFlag = (typeof TYPE_FLAGS)[number];
export type TypeFlags = Record<TypeFlag, boolean>;
