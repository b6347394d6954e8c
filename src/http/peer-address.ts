/**
 * The TCP peer address of a served request (SPEC G-3: the loopback exemption rests on the socket's
 * peer, never on a header).
 *
 * Bun's `server.requestIP(request)` is a `getpeername` system call on every call (measured in
 * docs/performance.md item 284: ~1.85 µs per request over the wire, one call per call under `strace -c`).
 * A listener bound to a loopback IP literal (`127.0.0.0/8`, `::1`) can only have loopback peers: the
 * kernel delivers packets addressed to a loopback address from the host itself only (Linux drops them
 * as martians on any other interface; macOS and the BSDs do the same). For such a listener the peer is
 * that family's loopback address without asking the socket; for any other bind address (`0.0.0.0`,
 * `::`, a LAN address, a host name such as `localhost`, whose resolution this code does not control)
 * the socket is asked every time.
 */

/** The part of Bun's server that knows a request's peer. */
export interface RequestIpSource {
  requestIP(r: Request): { address: string } | null;
}

/** Reads a request's peer address; `server` is null where no server is at hand (`app.handle` in tests). */
export type PeerAddressReader = (request: Request, server: RequestIpSource | null | undefined) => string | undefined;

const askSocket: PeerAddressReader = (request, server) => server?.requestIP(request)?.address;

/**
 * The loopback address every peer of a listener bound to `bindHost` has, or undefined when its peers
 * may be anything (any bind address that is not a loopback IP literal). IPv4 loopback is the whole
 * 127.0.0.0/8 (RFC 1122 3.2.1.3); the address returned is 127.0.0.1 for any of it, which
 * pipeline/context.ts `isLoopback` reads as loopback as it reads every 127.x peer.
 */
export function loopbackPeerOf(bindHost: string | undefined): string | undefined {
  if (bindHost === undefined) return undefined;
  const host = bindHost.startsWith("[") && bindHost.endsWith("]") ? bindHost.slice(1, -1) : bindHost;
  if (host === "::1" || host === "0:0:0:0:0:0:0:1") return "::1";
  const parts = host.split(".");
  if (parts.length !== 4 || parts[0] !== "127") return undefined;
  for (const p of parts) {
    if (!/^\d{1,3}$/.test(p) || Number(p) > 255) return undefined;
  }
  return "127.0.0.1";
}

/**
 * The peer reader for a listener bound to `bindHost` (`server.host`, or `--host`): a constant for a
 * loopback IP literal ({@link loopbackPeerOf}), else the socket's `requestIP` on every call. Without
 * a server (`app.handle` in tests: no socket, so no peer) both answer undefined, as before.
 */
export function peerAddressReader(bindHost: string | undefined): PeerAddressReader {
  const loopback = loopbackPeerOf(bindHost);
  return loopback === undefined ? askSocket : (_request, server) => (server ? loopback : undefined);
}
