/**
 * HTTP/1.1 over a raw TCP socket, for the tests of what no HTTP client sends (a body that trickles in,
 * a declared length never met, a body on a GET) and of what a client cannot see (whether the server
 * closed the connection, whether a second request is answered on the same one): test/http and
 * test/admin. The text written and read is the bytes on the wire, as UTF-8.
 */
import { connect, type Socket } from "node:net";

/** The `HTTP/1.1 NNN ` status lines in `text`, in order. */
function statusLines(text: string): string[] {
  return text.match(/HTTP\/1\.1 \d{3} /g) ?? [];
}

/** One raw connection to a test server: what it wrote so far and whether it closed the connection. */
export class RawConnection {
  /** Everything the server wrote, as UTF-8. */
  text = "";
  /** True once the connection closed (by the server, or after an error). */
  closed = false;

  private constructor(private readonly socket: Socket) {
    socket.on("data", (d: Buffer) => (this.text += d.toString("utf8")));
    socket.on("close", () => (this.closed = true));
    socket.on("error", () => (this.closed = true));
  }

  /** Connects to the host and port of `baseUrl` (a test server on 127.0.0.1). */
  static async open(baseUrl: string): Promise<RawConnection> {
    const url = new URL(baseUrl);
    const socket = connect(Number(url.port), url.hostname);
    const conn = new RawConnection(socket);
    await new Promise<void>((resolve, reject) => {
      socket.once("connect", () => resolve());
      socket.once("error", reject);
    });
    return conn;
  }

  /** Writes `bytes` (a string as UTF-8); nothing once the connection closed. */
  write(bytes: string): void {
    if (!this.closed) this.socket.write(bytes);
  }

  /** How many replies (status lines) came so far. */
  replies(): number {
    return statusLines(this.text).length;
  }

  /** The replies' statuses so far (`["401", "200"]`). */
  statuses(): string[] {
    return statusLines(this.text).map((l) => l.slice(9, 12));
  }

  /** Whether a reply so far said `Connection: close`. */
  saidClose(): boolean {
    return /^connection: close/im.test(this.text);
  }

  /** Waits until `n` replies came, the connection closed, or `ms` passed (polled every 10 ms). */
  async untilReplies(n: number, ms = 1_000): Promise<void> {
    const end = Date.now() + ms;
    while (this.replies() < n && !this.closed && Date.now() < end) await Bun.sleep(10);
  }

  /** Waits until the connection closed or `ms` passed; whether it closed. */
  async untilClosed(ms: number): Promise<boolean> {
    const end = Date.now() + ms;
    while (!this.closed && Date.now() < end) await Bun.sleep(10);
    return this.closed;
  }

  /** Ends the connection from the client's side. */
  destroy(): void {
    this.socket.destroy();
  }
}

/** {@link twoOnOneSocket}'s outcome. */
export interface TwoOnOneSocket {
  /** The statuses of the replies that came (`["200", "200"]`: both answered). */
  statuses: string[];
  /** Whether a reply said `Connection: close`. */
  saidClose: boolean;
  /** Whether the server closed the connection. */
  closed: boolean;
  /** How long the first reply took, ms. */
  firstMs: number;
}

/**
 * Writes `first` (then, `restAfterMs` later, `rest` when given) on one connection to `baseUrl`, waits
 * up to 1 s for its reply, then 50 ms, then writes `second` unless the server closed the connection and
 * waits up to 1 s for its reply: whether a connection is kept after the first reply.
 */
export async function twoOnOneSocket(baseUrl: string, first: string, second: string, rest = "", restAfterMs = 0): Promise<TwoOnOneSocket> {
  const conn = await RawConnection.open(baseUrl);
  const started = Date.now();
  conn.write(first);
  if (rest) setTimeout(() => conn.write(rest), restAfterMs);
  await conn.untilReplies(1);
  const firstMs = Date.now() - started;
  await Bun.sleep(50);
  conn.write(second);
  await conn.untilReplies(2);
  conn.destroy();
  return { statuses: conn.statuses(), saidClose: conn.saidClose(), closed: conn.closed, firstMs };
}

/** {@link trickle}'s outcome. */
export interface Trickled {
  /** The first reply's status (0 for none). */
  status: number;
  /** Everything the server wrote. */
  text: string;
  /** Whether the server closed the connection while the client still sent. */
  closedByServer: boolean;
}

/**
 * Writes `request` (a head and the start of a body declared longer) on a connection to `baseUrl`, then
 * `drip` every `dripMs` ms, until the server closes the connection or `waitMs` passed.
 */
export async function trickle(baseUrl: string, request: string, opts: { waitMs: number; dripMs: number; drip?: string }): Promise<Trickled> {
  const conn = await RawConnection.open(baseUrl);
  conn.write(request);
  const drip = setInterval(() => conn.write(opts.drip ?? " "), opts.dripMs);
  const closedByServer = await conn.untilClosed(opts.waitMs);
  clearInterval(drip);
  conn.destroy();
  return { status: Number(conn.text.split(" ")[1] ?? 0), text: conn.text, closedByServer };
}

/**
 * Writes `pieces` on a connection to `baseUrl`, `gapMs` apart, and resolves with the first reply (its
 * status and raw text: status line, headers, body) once all of its `Content-Length` body came; rejects
 * when none came within `waitMs`.
 */
export async function inPieces(baseUrl: string, pieces: string[], gapMs: number, waitMs = 5_000): Promise<{ status: number; text: string }> {
  const conn = await RawConnection.open(baseUrl);
  const whole = () => {
    const end = conn.text.indexOf("\r\n\r\n");
    const length = /content-length: (\d+)/i.exec(conn.text)?.[1];
    return end >= 0 && length !== undefined && Buffer.byteLength(conn.text.slice(end + 4)) >= Number(length);
  };
  try {
    for (const [i, piece] of pieces.entries()) {
      if (i > 0) await Bun.sleep(gapMs);
      conn.write(piece);
    }
    const end = Date.now() + waitMs;
    while (!whole() && Date.now() < end) await Bun.sleep(10);
    if (!whole()) throw new Error(`no whole reply within ${waitMs} ms: ${JSON.stringify(conn.text.slice(0, 200))}`);
    return { status: Number(conn.text.split(" ")[1]), text: conn.text };
  } finally {
    conn.destroy();
  }
}

/** A `POST path` request with a JSON Content-Type, a declared `Content-Length` of `length` and `body` (maybe less), and `extraHead` header lines. */
export function rawPost(path: string, length: number, body: string, extraHead = ""): string {
  return `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${extraHead}Content-Type: application/json\r\nContent-Length: ${length}\r\n\r\n${body}`;
}

/** An answer read off the wire by {@link exchange}: its status, one header by name, its body (UTF-8). */
export interface RawAnswer {
  /** Everything the server wrote. */
  raw: string;
  status: number;
  /** The first header `name` (case-insensitive) of the head, or null. */
  header(name: string): string | null;
  body: string;
}

/**
 * Sends `text` (a whole request as the bytes on the wire) on a new connection to the host and port of
 * `baseUrl` (a test server on 127.0.0.1), from source address `from` (default the kernel's choice, e.g.
 * 127.0.0.1), and reads until the server closes the connection (the request should make it close:
 * HTTP/1.0 or `Connection: close`); after `waitMs` (default 5000 ms) the socket is destroyed and what
 * was read is the answer. Rejects on a socket error (a refused connect, a source address not local).
 */
export function exchange(baseUrl: string, text: string, opts: { from?: string; waitMs?: number } = {}): Promise<RawAnswer> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: url.hostname, port: Number(url.port), ...(opts.from ? { localAddress: opts.from } : {}) }, () => socket.write(text));
    let out = "";
    const timer = setTimeout(() => socket.destroy(), opts.waitMs ?? 5_000);
    socket.on("data", (d: Buffer) => (out += d.toString("utf8")));
    socket.on("close", () => {
      clearTimeout(timer);
      const cut = out.indexOf("\r\n\r\n");
      const head = cut < 0 ? out : out.slice(0, cut);
      resolve({
        raw: out,
        status: Number(out.split(" ")[1]),
        header: (name) => new RegExp(`^${name}: (.*)$`, "im").exec(head)?.[1]?.replace(/\r$/, "") ?? null,
        body: cut < 0 ? "" : out.slice(cut + 4),
      });
    });
    socket.on("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
  });
}
