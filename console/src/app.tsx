import type { AcdsClient } from '@acds/client';
import { useEffect, useMemo, useState } from 'preact/hooks';
import { AssetsTab } from './assets';
import { CartEventsTab } from './cart-events';
import { ConversionsTab } from './conversions';
import { ReportsTab } from './reports';
import { messageOf, Problem } from './answer';
import { clientFor, forgetKey, saveKey, savedKey } from './session';

const SECTIONS = [
  ['assets', 'Assets'],
  ['conversions', 'Conversions'],
  ['reports', 'Reports'],
  ['cart-events', 'Cart events'],
] as const;
type Section = (typeof SECTIONS)[number][0];

const sectionOfHash = (): Section => SECTIONS.find(([id]) => `#${id}` === location.hash)?.[0] ?? 'assets';

export function App() {
  const [key, setKey] = useState(savedKey);
  const [retryIn, setRetryIn] = useState(0);
  const client = useMemo(() => (key ? clientFor(key, setRetryIn) : undefined), [key]);

  useEffect(() => {
    if (retryIn <= 0) return;
    const timer = setTimeout(() => setRetryIn(retryIn - 1), 1000);
    return () => clearTimeout(timer);
  }, [retryIn]);

  if (!client) {
    return (
      <SignIn
        retryIn={retryIn}
        onRateLimitWait={setRetryIn}
        onSignedIn={(signedIn) => {
          saveKey(signedIn);
          setKey(signedIn);
        }}
      />
    );
  }
  return (
    <Shell
      client={client}
      retryIn={retryIn}
      onSignOut={() => {
        forgetKey();
        setKey(null);
      }}
    />
  );
}

interface SignInProps {
  onSignedIn: (key: string) => void;
  /** Seconds until a request refused for the rate limit is sent again; 0 when none waits. */
  retryIn: number;
  onRateLimitWait: (seconds: number) => void;
}

function SignIn({ onSignedIn, retryIn, onRateLimitWait }: SignInProps) {
  const [key, setKey] = useState('');
  const [problem, setProblem] = useState<string>();
  const [busy, setBusy] = useState(false);
  const signIn = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setProblem(undefined);
    try {
      // The cheapest question a key must be good for: the assets whose id is 0 (none).
      await clientFor(key.trim(), onRateLimitWait).assets.page({ id: 0 });
      onSignedIn(key.trim());
    } catch (error) {
      setProblem(messageOf(error));
    } finally {
      setBusy(false);
    }
  };
  return (
    <main class="sign-in">
      <form onSubmit={signIn}>
        <h1>acds console</h1>
        <label>
          API key
          <input type="password" autocomplete="off" required value={key} onInput={(event) => setKey(event.currentTarget.value)} />
        </label>
        <button type="submit" disabled={busy}>
          Sign in
        </button>
        {retryIn > 0 && (
          <p class="notice" role="status">
            too many requests, retrying in {retryIn} s
          </p>
        )}
        <Problem text={problem} />
        <p class="hint">The key is kept in this browser tab only, until the tab is closed or you sign out.</p>
      </form>
    </main>
  );
}

function Shell({ client, retryIn, onSignOut }: { client: AcdsClient; retryIn: number; onSignOut: () => void }) {
  const [section, setSection] = useState(sectionOfHash);
  // The filters the conversions and reports tabs share.
  const [query, setQuery] = useState('');
  useEffect(() => {
    const follow = () => setSection(sectionOfHash());
    addEventListener('hashchange', follow);
    return () => removeEventListener('hashchange', follow);
  }, []);
  return (
    <div class="shell">
      <header>
        <strong class="brand">acds</strong>
        <nav aria-label="Sections">
          {SECTIONS.map(([id, label]) => (
            <a key={id} href={`#${id}`} aria-current={section === id ? 'page' : undefined}>
              {label}
            </a>
          ))}
        </nav>
        <button type="button" class="quiet" onClick={onSignOut}>
          Sign out
        </button>
      </header>
      {retryIn > 0 && (
        <p class="notice" role="status">
          too many requests, retrying in {retryIn} s
        </p>
      )}
      <main>
        {section === 'assets' && <AssetsTab client={client} />}
        {section === 'conversions' && <ConversionsTab client={client} query={query} onQuery={setQuery} />}
        {section === 'reports' && <ReportsTab client={client} query={query} onQuery={setQuery} />}
        {section === 'cart-events' && <CartEventsTab client={client} />}
      </main>
    </div>
  );
}
