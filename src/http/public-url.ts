import type { Server } from 'node:http';
import { isIPv6 } from 'node:net';
import type { Config } from '../config.js';

/**
 * What every `public_url` starts with: PUBLIC_URL, or else where the service listens, as its
 * start-up line prints it (with the port it was given when PORT is 0). Never the request's Host
 * header: whoever sends the request chooses that, and a page built from an entry would embed
 * their address.
 */
export function publicUrlOf(config: Pick<Config, 'publicUrl' | 'host' | 'port'>, server: Server): string {
  if (config.publicUrl !== undefined) return config.publicUrl;
  const address = server.address();
  const port = address !== null && typeof address === 'object' ? address.port : config.port;
  return `http://${hostInUrl(config.host)}:${port}`;
}

/** HOST as a URL writes it: an address of every interface as the loopback one, IPv6 in brackets. */
function hostInUrl(host: string): string {
  if (host === '0.0.0.0') return '127.0.0.1';
  if (host === '::') return '[::1]';
  return isIPv6(host) ? `[${host}]` : host;
}
