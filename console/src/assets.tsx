import type { AcdsClient, AssetEntry } from '@acds/client';
import { useEffect, useRef, useState } from 'preact/hooks';
import { messageOf } from './session';

const TYPES = [
  ['image', 'Images', 'IMG'],
  ['video', 'Videos', 'VID'],
  ['script', 'Scripts', 'JS'],
  ['style', 'Stylesheets', 'CSS'],
  ['text', 'Texts', 'TXT'],
] as const;
type AssetType = (typeof TYPES)[number][0];

const typeOf = (asset: AssetEntry): AssetType | undefined => TYPES.find(([flag]) => asset[flag])?.[0];
const typeLabel = (asset: AssetEntry) =>
  TYPES.find(([flag]) => flag === typeOf(asset))?.[1]
    .replace(/s$/, '')
    .toLowerCase() ?? 'file';
const badge = (asset: AssetEntry) => TYPES.find(([flag]) => flag === typeOf(asset))?.[2] ?? 'FILE';

export function formatBytes(bytes: number | null): string {
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
  name: string;
  state: 'waiting' | 'sending' | 'done' | 'failed';
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

  const reload = async () => {
    try {
      const all: AssetEntry[] = [];
      for await (const asset of client.assets.list()) all.push(asset);
      setAssets(all);
    } catch (error) {
      setProblem(messageOf(error));
    }
  };
  useEffect(() => {
    reload();
  }, [client]);

  /** Runs a change, shows the API's message if it fails, and reads the assets again. */
  const act = async (change: () => Promise<unknown>) => {
    setProblem('');
    try {
      await change();
    } catch (error) {
      setProblem(messageOf(error));
    }
    await reload();
  };

  const upload = async (files: File[]) => {
    if (files.length === 0) return;
    const states: Upload[] = files.map((file) => ({ name: file.name, state: 'waiting' }));
    const show = () => setUploads([...states]);
    show();
    for (const [index, file] of files.entries()) {
      states[index]!.state = 'sending';
      show();
      try {
        await client.assets.create({ name: file.name, file, folder });
        states[index]!.state = 'done';
      } catch (error) {
        Object.assign(states[index]!, { state: 'failed', problem: messageOf(error) });
      }
      show();
    }
    await reload();
  };

  const folders = [...new Set([...foldersOf(assets ?? []), ...newFolders])].sort();
  const shown = (assets ?? []).filter((asset) => asset.folder === folder && (type === '' || typeOf(asset) === type));
  const chosen = assets?.find((asset) => asset.id === selected);
  const done = uploads.filter((item) => item.state === 'done' || item.state === 'failed').length;

  return (
    <section class="assets" aria-label="Assets">
      <aside class="folders">
        <h2>Folders</h2>
        <ul>
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
      <div class="library">
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
        {problem && (
          <p role="alert" class="problem">
            {problem}
          </p>
        )}
        {uploads.length > 0 && (
          <div class="uploads">
            <label>
              Upload progress
              <progress max={uploads.length} value={done} />
            </label>
            <ul>
              {uploads.map((item) => (
                <li key={item.name}>
                  {item.name}: {item.state}
                  {item.problem && ` (${item.problem})`}
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
                    {badge(asset)}
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
        <AssetDetails key={chosen.id} asset={chosen} folders={foldersOf(assets ?? [])} act={act} client={client} onDeleted={() => setSelected(undefined)} />
      )}
    </section>
  );
}

function AssetDetails({
  asset,
  folders,
  client,
  act,
  onDeleted,
}: {
  asset: AssetEntry;
  /** The folders that exist, where the asset may move. */
  folders: string[];
  client: AcdsClient;
  act: (change: () => Promise<unknown>) => Promise<void>;
  onDeleted: () => void;
}) {
  const [name, setName] = useState(asset.name);
  const [folder, setFolder] = useState(asset.folder);
  const [copied, setCopied] = useState(false);
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
          onClick={async () => {
            await navigator.clipboard.writeText(address);
            setCopied(true);
          }}
        >
          {copied ? 'Copied' : 'Copy URL'}
        </button>
      )}
      <form
        onSubmit={(event) => {
          event.preventDefault();
          act(() => client.assets.update(asset.id, { name }));
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
          act(() => client.assets.update(asset.id, { folder }));
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
              if (file) act(() => client.assets.update(asset.id, { file }));
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
              await act(() => client.assets.delete(asset.id));
              onDeleted();
            }}
          >
            Delete for good
          </button>
        </form>
      </dialog>
    </aside>
  );
}
