import { AcdsClient } from '@acds/client';

/** The key lives in this tab's sessionStorage: gone when the tab closes, never shared with other tabs. */
const KEY_ITEM = 'acds.apiKey';

export const savedKey = (): string | null => sessionStorage.getItem(KEY_ITEM);
export const saveKey = (key: string) => sessionStorage.setItem(KEY_ITEM, key);
export const forgetKey = () => sessionStorage.removeItem(KEY_ITEM);

/** The service's root: the console is served at <root>/console/, whatever prefix a proxy adds. */
export function serviceUrl(): string {
  return new URL('..', location.href).href;
}

export function clientFor(apiKey: string, onRateLimitWait: (seconds: number) => void): AcdsClient {
  return new AcdsClient({ baseUrl: serviceUrl(), apiKey, onRateLimitWait });
}
