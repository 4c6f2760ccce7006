/**
 * Remote addresses in the forms CFSSL accepts for `-remote` and config `remotes` (behaviour doc
 * 4.4, cfssl `api/client/client.go:normalizeURL`): `[http(s)://]host[:port]`, default scheme
 * http, default port 8888, and a comma-separated string as an ordered failover list. A path after
 * the authority is kept as a prefix, so a remote behind a reverse proxy (`https://pki/ca1`) works.
 */

/** A parsed remote. */
export interface RemoteAddress {
  /** `http://host:port` (port always explicit): the undici pool origin. */
  origin: string;
  /** Path prefix without trailing slash (`''` for none). */
  basePath: string;
  /** `origin` + `basePath`: how the remote is named in errors and logs. */
  url: string;
  scheme: 'http' | 'https';
}

/** CFSSL's default API port (`cfssl serve -port`, multirootca `-a :8888`). */
export const DEFAULT_REMOTE_PORT = 8888;

// scheme? host (name, IPv4 or [IPv6]) port? path? — no userinfo: credentials in a URL would end up
// in every error message that names the remote.
const ADDRESS = /^(?:(https?):\/\/)?(\[[0-9A-Fa-f:.]+\]|[^/:?#[\]@\s]+)(?::(\d{1,5}))?(\/[^?#\s]*)?$/i;

/**
 * Parse one remote address; throws a plain `Error` naming the problem (the caller adds which option
 * it came from). Addresses are not secrets, so the value is echoed.
 */
export function parseRemoteAddress(input: string): RemoteAddress {
  const text = input.trim();
  const match = ADDRESS.exec(text);
  if (match === null) throw new Error(`must be http(s)://host[:port] or host[:port], got ${JSON.stringify(input)}`);
  const scheme = (match[1] ?? 'http').toLowerCase() as 'http' | 'https';
  const host = (match[2] as string).toLowerCase();
  const port = match[3] === undefined ? DEFAULT_REMOTE_PORT : Number(match[3]);
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new Error(`port must be 1..65535, got ${JSON.stringify(input)}`);
  const basePath = (match[4] ?? '').replace(/\/+$/, '');
  const origin = `${scheme}://${host}:${port}`;
  return { origin, basePath, url: `${origin}${basePath}`, scheme };
}

/**
 * Parse the `remotes` option: an array of addresses or CFSSL's comma-separated string. Order is
 * kept (it is the failover order); a remote listed twice is refused because it would be tried twice.
 */
export function parseRemoteList(input: string | readonly string[]): RemoteAddress[] {
  const items = typeof input === 'string' ? input.split(',') : [...input];
  const remotes: RemoteAddress[] = [];
  items.forEach((item, index) => {
    if (typeof item !== 'string' || item.trim() === '') throw new Error(`remotes[${index}] must be a non-empty string`);
    let remote: RemoteAddress;
    try {
      remote = parseRemoteAddress(item);
    } catch (cause) {
      throw new Error(`remotes[${index}] ${(cause as Error).message}`, { cause });
    }
    if (remotes.some((known) => known.url === remote.url)) throw new Error(`remotes[${index}] ${remote.url} is listed twice`);
    remotes.push(remote);
  });
  if (remotes.length === 0) throw new Error('remotes must name at least one remote');
  return remotes;
}
