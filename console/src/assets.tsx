import type { AcdsClient, AssetEntry, AssetFields } from '@acds/client';
import { useEffect, useRef, useState } from 'preact/hooks';
import { messageOf, Problem } from './answer';

const TYPES = [
  ['image', 'Images', 'IMG'],
  ['video', 'Videos', 'VID'],
  ['script', 'Scripts', 'JS'],
  ['style', 'Stylesheets', 'CSS'],
  ['text', 'Texts', 'TXT'],
] as const;
type AssetType = (typeof TYPES)[number][0];

/** The type flag an asset has, with its names: [flag, plural, badge]. */
const typeOf = (asset: AssetEntry) => TYPES.find(([flag]) => asset[flag]);
const typeLabel = (asset: AssetEntry) => typeOf(asset)?.[1].replace(/s$/, '').toLowerCase() ?? 'file';

function formatBytes(bytes: number | null): string {
  if (bytes === null) return 'remote';
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/** Every folder the assets are in, with the folders above them: "a/b" gives "a" and "a/b". */
function foldersOf(assets: AssetEntry[]): string[] {
  const folders = new Set<string>();
  for (const { folder } of assets) {
    const names = folder.split('/').filter(Boolean);
    for (let depth = 1; depth <= names.length; depth++) folders.add(names.slice(0, depth).join('/'));
  }
  return [...folders].sort();
}

interface Upload {
  id: number;
  name: string;
  state: 'waiting' | 'sending' | 'done' | 'failed';
  /** The API's message when it failed. */
  problem?: string;
}

export function AssetsTab({ client }: { client: AcdsClient }) {
  const [assets, setAssets] = useState<AssetEntry[]>();
  const [folder, setFolder] = useState('');
  const [type, setType] = useState<AssetType | ''>('');
  const [selected, setSelected] = useState<number>();
  const [problem, setProblem] = useState('');
  const [uploads, setUploads] = useState<Upload[]>([]);
  const [dragging, setDragging] = useState(false);
  // Folders made here that hold nothing yet: the service keeps a folder once an asset is in it.
  const [newFolders, setNewFolders] = useState<string[]>([]);
  const [newFolder, setNewFolder] = useState('');
  const picker = useRef<HTMLInputElement>(null);

  const uploadCount = useRef(0);

  useEffect(() => {
    const controller = new AbortController();
    (async () => {
      const all: AssetEntry[] = [];
      for await (const asset of client.assets.list({}, { signal: controller.signal })) all.push(asset);
      setAssets(all);
    })().catch((error: unknown) => controller.signal.aborted || setProblem(messageOf(error)));
    return () => controller.abort();
  }, [client]);

  /**
   * Runs a change and applies what it answers to the assets shown (an entry read again, or one
   * gone), so that no change reads the whole library again; shows the API's message if it fails.
   */
  const act = async (change: () => Promise<(shown: AssetEntry[]) => AssetEntry[]>): Promise<boolean> => {
    setProblem('');
    try {
      const apply = await change();
      setAssets((shown) => apply(shown ?? []));
      return true;
    } catch (error) {
      setProblem(messageOf(error));
      return false;
    }
  };
  /** The change to the assets shown once `id` is read again after a write. */
  const reread = async (id: number) => {
    const entry = await client.assets.get(id);
    return (shown: AssetEntry[]) => [...shown.filter((asset) => asset.id !== id), entry].sort((a, b) => a.id - b.id);
  };

  /** Writes to asset `id` and shows its entry as it is now. */
  const rewrite = (id: number, write: () => Promise<unknown>) =>
    act(async () => {
      await write();
      return reread(id);
    });
  const remove = (id: number) =>
    act(async () => {
      await client.assets.delete(id);
      return (shown: AssetEntry[]) => shown.filter((asset) => asset.id !== id);
    });

  const upload = async (files: File[]) => {
    const batch: Upload[] = files.map((file) => ({ id: ++uploadCount.current, name: file.name, state: 'waiting' }));
    const set = (id: number, change: Partial<Upload>) => setUploads((shown) => shown.map((item) => (item.id === id ? { ...item, ...change } : item)));
    setUploads((shown) => [...shown, ...batch]);
    for (const [index, file] of files.entries()) {
      const { id } = batch[index]!;
      set(id, { state: 'sending' });
      try {
        const apply = await reread(await client.assets.create({ name: file.name, file, folder }));
        setAssets((shown) => apply(shown ?? []));
        set(id, { state: 'done' });
      } catch (error) {
        set(id, { state: 'failed', problem: messageOf(error) });
      }
    }
  };

  const existing = foldersOf(assets ?? []);
  const folders = [...new Set([...existing, ...newFolders])].sort();
  const shown = (assets ?? []).filter((asset) => asset.folder === folder && (type === '' || typeOf(asset)?.[0] === type));
  const chosen = assets?.find((asset) => asset.id === selected);
  const done = uploads.filter((item) => item.state === 'done' || item.state === 'failed').length;

  return (
    <section class="assets" aria-label="Assets">
      <aside class="folders">
        <h2>Folders</h2>
        <ul aria-label="Folders">
          {['', ...folders].map((path) => (
            <li key={path} style={{ paddingLeft: `${path.split('/').filter(Boolean).length * 0.8}rem` }}>
              <button type="button" class="link" aria-current={path === folder ? 'true' : undefined} onClick={() => setFolder(path)}>
                {path === '' ? '(root)' : path.split('/').at(-1)}
              </button>
            </li>
          ))}
        </ul>
        <form
          class="new-folder"
          onSubmit={(event) => {
            event.preventDefault();
            const name = newFolder.trim().replace(/^\/+|\/+$/g, '');
            if (name === '') return;
            const path = folder === '' ? name : `${folder}/${name}`;
            setNewFolders([...newFolders, path]);
            setFolder(path);
            setNewFolder('');
          }}
        >
          <label>
            New folder
            <input value={newFolder} placeholder="landing" onInput={(event) => setNewFolder(event.currentTarget.value)} />
          </label>
          <button type="submit" class="quiet">
            Create folder
          </button>
          <p class="hint">It is kept once a file is uploaded into it.</p>
        </form>
      </aside>
      <div>
        <div class="toolbar">
          <label>
            Type
            <select value={type} onChange={(event) => setType(event.currentTarget.value as AssetType | '')}>
              <option value="">All types</option>
              {TYPES.map(([flag, label]) => (
                <option key={flag} value={flag}>
                  {label}
                </option>
              ))}
            </select>
          </label>
          <button type="button" onClick={() => picker.current?.click()}>
            Upload
          </button>
          <input
            ref={picker}
            type="file"
            multiple
            hidden
            aria-label="Files to upload"
            onChange={(event) => {
              upload([...(event.currentTarget.files ?? [])]);
              event.currentTarget.value = '';
            }}
          />
          <span class="where">in {folder === '' ? 'the root folder' : folder}</span>
        </div>
        <Problem text={problem} />
        {uploads.length > 0 && (
          <div class="uploads">
            <label>
              Upload progress
              <progress max={uploads.length} value={done} />
            </label>
            <ul>
              {uploads.map((item) => (
                <li key={item.id}>
                  {item.name}: {item.problem ?? item.state}
                </li>
              ))}
            </ul>
          </div>
        )}
        <ul
          class={`grid${dragging ? ' dragging' : ''}`}
          aria-label="Assets in this folder"
          onDragOver={(event) => {
            event.preventDefault();
            setDragging(true);
          }}
          onDragLeave={() => setDragging(false)}
          onDrop={(event) => {
            event.preventDefault();
            setDragging(false);
            upload([...(event.dataTransfer?.files ?? [])]);
          }}
        >
          {assets === undefined && <li class="empty">Loading…</li>}
          {assets !== undefined && shown.length === 0 && <li class="empty">No assets here. Drop files to upload them.</li>}
          {shown.map((asset) => (
            <li key={asset.id}>
              <button type="button" class="card" aria-pressed={asset.id === selected} onClick={() => setSelected(asset.id)}>
                {asset.image && asset.public_url ? (
                  <img src={asset.public_url} alt="" loading="lazy" />
                ) : (
                  <span class="icon" aria-hidden="true">
                    {typeOf(asset)?.[2] ?? 'FILE'}
                  </span>
                )}
                <span class="name">{asset.name}</span>
                <span class="meta">
                  {typeLabel(asset)} · {formatBytes(asset.size)}
                </span>
              </button>
            </li>
          ))}
        </ul>
      </div>
      {chosen && (
        <AssetDetails
          key={chosen.id}
          asset={chosen}
          folders={existing}
          update={(fields) => rewrite(chosen.id, () => client.assets.update(chosen.id, fields))}
          remove={async () => (await remove(chosen.id)) && setSelected(undefined)}
        />
      )}
    </section>
  );
}

function AssetDetails({
  asset,
  folders,
  update,
  remove,
}: {
  asset: AssetEntry;
  /** The folders that exist, where the asset may move (the service refuses one that does not). */
  folders: string[];
  update: (fields: AssetFields) => Promise<unknown>;
  remove: () => Promise<unknown>;
}) {
  const [name, setName] = useState(asset.name);
  const [folder, setFolder] = useState(asset.folder);
  const [copied, setCopied] = useState<string>();
  const confirm = useRef<HTMLDialogElement>(null);
  const replacer = useRef<HTMLInputElement>(null);
  const address = asset.public_url ?? asset.url;
  return (
    <aside class="details" aria-label={`Asset ${asset.name}`}>
      <h2>{asset.name}</h2>
      <dl>
        <dt>Type</dt>
        <dd>{asset.content_type ?? typeLabel(asset)}</dd>
        <dt>Size</dt>
        <dd>{formatBytes(asset.size)}</dd>
        {asset.width !== null && (
          <>
            <dt>Dimensions</dt>
            <dd>
              {asset.width} × {asset.height}
            </dd>
          </>
        )}
        <dt>{asset.url ? 'Remote URL' : 'Public URL'}</dt>
        <dd>
          <input readOnly aria-label={asset.url ? 'Remote URL' : 'Public URL'} value={address ?? ''} />
        </dd>
      </dl>
      {address && (
        <button
          type="button"
          onClick={() =>
            // The clipboard is there only for pages served over HTTPS or from localhost.
            navigator.clipboard.writeText(address).then(
              () => setCopied('Copied'),
              () => setCopied('Copying needs HTTPS: select the URL above and copy it'),
            )
          }
        >
          {copied ?? 'Copy URL'}
        </button>
      )}
      <form
        onSubmit={(event) => {
          event.preventDefault();
          update({ name });
        }}
      >
        <label>
          Name
          <input value={name} onInput={(event) => setName(event.currentTarget.value)} />
        </label>
        <button type="submit">Rename</button>
      </form>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          update({ folder });
        }}
      >
        <label>
          Folder
          <select value={folder} onChange={(event) => setFolder(event.currentTarget.value)}>
            {['', ...folders].map((path) => (
              <option key={path} value={path}>
                {path === '' ? '(root)' : path}
              </option>
            ))}
          </select>
        </label>
        <button type="submit">Move</button>
      </form>
      {!asset.url && (
        <>
          <button type="button" onClick={() => replacer.current?.click()}>
            Replace content
          </button>
          <input
            ref={replacer}
            type="file"
            hidden
            aria-label="New content"
            onChange={(event) => {
              const file = event.currentTarget.files?.[0];
              // Emptied, so that choosing the same file again replaces again.
              event.currentTarget.value = '';
              if (file) update({ file });
            }}
          />
        </>
      )}
      <button type="button" class="danger" onClick={() => confirm.current?.showModal()}>
        Delete
      </button>
      <dialog ref={confirm} aria-label="Confirm deletion">
        <p>Delete {asset.name}? Pages that embed it will no longer find it.</p>
        <form method="dialog">
          <button type="submit">Cancel</button>
          <button
            type="button"
            class="danger"
            onClick={async () => {
              confirm.current?.close();
              await remove();
            }}
          >
            Delete for good
          </button>
        </form>
      </dialog>
    </aside>
  );
}
