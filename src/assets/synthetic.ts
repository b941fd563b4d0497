import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { AssetService } from './service.js';

/** Real small files shipped in `seed/`, with where they go and the flags a page would set. */
const SAMPLE_FILES = [
  { file: 'hero.jpg', folder: 'landing/images', fields: {} },
  { file: 'logo.png', folder: 'brand', fields: {} },
  { file: 'badge.svg', folder: 'landing/images', fields: {} },
  { file: 'countdown.js', folder: 'landing/scripts', fields: { defer: 't' } },
  { file: 'tracking.js', folder: 'shared/scripts', fields: { async: 't' } },
  { file: 'checkout.css', folder: 'checkout', fields: {} },
  { file: 'terms.txt', folder: 'legal', fields: {} },
  { file: 'thank-you.html', folder: 'checkout', fields: {} },
] as const;

const REMOTE = [
  { name: 'sales-letter.mp4', url: 'https://cdn.example.com/videos/sales-letter.mp4', folder: 'landing/videos' },
  { name: 'testimonial.webm', url: 'https://cdn.example.com/videos/testimonial.webm', folder: 'landing/videos' },
  { name: 'product-shot.webp', url: 'https://images.example.com/product-shot.webp', folder: 'landing/images' },
] as const;

const seedDir = fileURLToPath(new URL('../../seed/', import.meta.url));

/**
 * Adds `count` assets through the real service: the sample files and remote references in
 * turn, in a few folders. Names get a run tag so that seeding twice adds rather than clashes.
 */
export async function seedAssets(assets: AssetService, accountId: number, count: number): Promise<number> {
  const tag = Date.now().toString(36);
  const all = [...SAMPLE_FILES, ...REMOTE];
  for (let index = 0; index < count; index++) {
    const sample = all[index % all.length]!;
    const round = Math.floor(index / all.length);
    const rename = (name: string) => name.replace(/(\.[^.]+)$/, `-${tag}-${round}$1`);
    if ('url' in sample) {
      const fields = new Map([
        ['name', rename(sample.name)],
        ['url', sample.url],
        ['folder', sample.folder],
      ]);
      await assets.create(accountId, { fields });
    } else {
      const staged = await assets.stage(accountId, fs.createReadStream(seedDir + sample.file));
      const fields = new Map<string, string>([['folder', sample.folder], ...Object.entries(sample.fields)]);
      await assets.create(accountId, { fields, file: { ...staged, filename: rename(sample.file) } });
    }
  }
  return count;
}
