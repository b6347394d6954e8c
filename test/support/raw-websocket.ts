/**
 * A WebSocket client on a plain TCP socket (node:net) for tests that need what a browser-style client
 * cannot do: stop reading, so that the server's send buffer fills (TCP backpressure), then read on.
 * Text frames only; client frames are masked (RFC 6455 §5.3), server frames are not.
 */
import net from "node:net";

/** A connected raw client: `pause()` / `resume()` the reading, `send` a text frame, the text frames received so far. */
export interface RawWebSocket {
  texts: string[];
  send(text: string): void;
  pause(): void;
  resume(): void;
  /** Waits until `check` holds over the received texts (polling), or throws after `timeoutMs`. */
  until(check: (texts: string[]) => boolean, timeoutMs?: number): Promise<void>;
  close(): void;
}

/** Opens `ws://host:port/path` with the upgrade's extra `headers`; resolves once the server answered 101. */
export function openRawWebSocket(url: string, headers: Record<string, string> = {}): Promise<RawWebSocket> {
  const u = new URL(url);
  const sock = net.connect(Number(u.port), u.hostname);
  const texts: string[] = [];
  // Received bytes not yet decoded: store[start, end). Appended in place (doubling), so a frame of
  // many MB that arrives in 64 KiB reads is not copied again on every read.
  let store = Buffer.alloc(1 << 16);
  let start = 0;
  let end = 0;
  const append = (d: Buffer) => {
    if (end + d.length > store.length) {
      const live = end - start;
      const next = live + d.length > store.length / 2 ? Buffer.alloc(Math.max(store.length * 2, live + d.length)) : store;
      store.copy(next, 0, start, end);
      store = next;
      start = 0;
      end = live;
    }
    d.copy(store, end);
    end += d.length;
  };
  let upgraded = false;
  const parts: Buffer[] = [];
  const decode = () => {
    for (;;) {
      const buf = store.subarray(start, end);
      if (buf.length < 2) return;
      const op = buf[0]! & 0x0f;
      let len = buf[1]! & 0x7f;
      let at = 2;
      if (len === 126) {
        if (buf.length < 4) return;
        len = buf.readUInt16BE(2);
        at = 4;
      } else if (len === 127) {
        if (buf.length < 10) return;
        len = Number(buf.readBigUInt64BE(2));
        at = 10;
      }
      if (buf.length < at + len) return;
      const payload = buf.subarray(at, at + len);
      const fin = (buf[0]! & 0x80) !== 0;
      start += at + len;
      if (op === 0x1 || op === 0x0) {
        parts.push(Buffer.from(payload));
        if (fin) texts.push(Buffer.concat(parts.splice(0)).toString("utf8"));
      }
    }
  };
  return new Promise((resolve, reject) => {
    sock.once("error", reject);
    sock.on("connect", () => {
      const extra = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join("");
      sock.write(`GET ${u.pathname} HTTP/1.1\r\nHost: ${u.host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n${extra}\r\n`);
    });
    sock.on("data", (d: Buffer) => {
      append(d);
      if (!upgraded) {
        const at = store.subarray(start, end).indexOf("\r\n\r\n");
        if (at < 0) return;
        const head = store.subarray(start, start + at).toString("latin1");
        if (!head.startsWith("HTTP/1.1 101")) return reject(new Error(`upgrade refused: ${head.split("\r\n")[0]}`));
        upgraded = true;
        start += at + 4;
        resolve(client);
      }
      decode();
    });
    const client: RawWebSocket = {
      texts,
      send(text) {
        const payload = Buffer.from(text, "utf8");
        const mask = Buffer.from([0x12, 0x34, 0x56, 0x78]);
        const n = payload.length;
        const head = n < 126 ? Buffer.from([0x81, 0x80 | n]) : n < 65536 ? Buffer.from([0x81, 0x80 | 126, n >> 8, n & 0xff]) : Buffer.concat([Buffer.from([0x81, 0x80 | 127]), (() => { const b = Buffer.alloc(8); b.writeBigUInt64BE(BigInt(n)); return b; })()]);
        const masked = Buffer.alloc(n);
        for (let i = 0; i < n; i++) masked[i] = payload[i]! ^ mask[i & 3]!;
        sock.write(Buffer.concat([head, mask, masked]));
      },
      pause: () => void sock.pause(),
      resume: () => void sock.resume(),
      async until(check, timeoutMs = 10_000) {
        const deadline = Date.now() + timeoutMs;
        while (!check(texts)) {
          if (Date.now() > deadline) throw new Error(`no such frames after ${timeoutMs} ms (${texts.length} received)`);
          await Bun.sleep(20);
        }
      },
      close: () => void sock.destroy(),
    };
  });
}
