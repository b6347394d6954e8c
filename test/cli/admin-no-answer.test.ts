/**
 * The CLI's call of the admin API when the instance accepts the connection and then sends nothing (a
 * team-operator tryout: a stalled database held the admin API; `switchyard keys list` waited about two
 * minutes and then said "no running switchyard instance answers … (left by an instance that has
 * stopped)" of an instance that was running). It now gives up after its bound and says the instance
 * did not answer in time; a refused connection still reads as no instance answering. The bound is for
 * the status; the body has its own, restarted as each piece arrives: a slow large reply is read to its
 * end, and one that stops or is cut off is said to be so, not "did not answer" (a reviewer's finding).
 */
import { afterAll, expect, test } from "bun:test";
import { createServer, type Socket } from "node:net";
import { askAdmin, NoAnswer, noAnswerLine } from "../../src/cli/admin-request.ts";

const held: Socket[] = [];
const silent = createServer((s) => void held.push(s)); // takes the connection, never answers
await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
const url = `http://127.0.0.1:${(silent.address() as { port: number }).port}`;

afterAll(() => {
  for (const s of held) s.destroy();
  silent.close();
});

test("an instance that takes the connection and sends nothing: a NoAnswer after the bound, whose line says it did not answer in time", async () => {
  const t0 = Date.now();
  const got = await askAdmin(url, "k", "GET", "/keys", undefined, 500);
  expect(got).toBeInstanceOf(NoAnswer);
  expect(Date.now() - t0).toBeLessThan(5_000);
  const line = noAnswerLine(url, got as NoAnswer);
  expect(line).toContain(`the switchyard instance at ${url} did not answer within 1 s`);
  expect(line).not.toContain("no running switchyard instance");
});

test("nothing listening: undefined (no instance answers), at once", async () => {
  const closed = createServer();
  await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
  const port = (closed.address() as { port: number }).port;
  await new Promise<void>((resolve) => closed.close(() => resolve()));
  expect(await askAdmin(`http://127.0.0.1:${port}`, "k", "GET", "/keys", undefined, 5_000)).toBeUndefined();
});

/**
 * A server on 127.0.0.1 that answers every connection with `head` (an HTTP/1.1 status line and
 * headers) at once (or `headAfterMs` later), then `pieces` of body `everyMs` apart, then ends (`end`) or
 * drops (`drop`) the connection, or holds it (`hold`).
 */
async function replying(head: string, pieces: string[], everyMs: number, then: "end" | "drop" | "hold", headAfterMs = 0): Promise<{ url: string; close(): void }> {
  const sockets: Socket[] = [];
  const srv = createServer((s) => {
    sockets.push(s);
    s.once("data", async () => {
      if (headAfterMs) await Bun.sleep(headAfterMs);
      s.write(head);
      for (const p of pieces) {
        await Bun.sleep(everyMs);
        s.write(p);
      }
      if (then === "end") s.end();
      if (then === "drop") s.destroy();
    });
  });
  await new Promise<void>((resolve) => srv.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(srv.address() as { port: number }).port}`,
    close() {
      for (const s of sockets) s.destroy();
      srv.close();
    },
  };
}

test("a reply whose status comes at once and whose body takes longer than the bound, piece by piece: read to its end", async () => {
  const json = JSON.stringify({ rows: Array.from({ length: 8 }, (_, i) => ({ i, pad: "x".repeat(50) })) });
  const pieces = Array.from({ length: 8 }, (_, i) => json.slice((i * json.length) / 8, ((i + 1) * json.length) / 8));
  const srv = await replying(`HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${json.length}\r\n\r\n`, pieces, 150, "end");
  try {
    const got = await askAdmin(srv.url, "k", "GET", "/usage", undefined, 500); // 8 × 150 ms: 1.2 s in all
    expect(got).toEqual({ status: 200, data: JSON.parse(json) });
  } finally {
    srv.close();
  }
});

test("a status that comes late in the bound, and a first piece of body within the bound after it: read (the bound restarts at the status)", async () => {
  const json = JSON.stringify({ ok: true });
  const srv = await replying(`HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${json.length}\r\n\r\n`, [json], 350, "end", 350);
  try {
    const got = await askAdmin(srv.url, "k", "GET", "/usage", undefined, 500); // status at 350 ms, body at 700 ms
    expect(got).toEqual({ status: 200, data: { ok: true } });
  } finally {
    srv.close();
  }
});

test("a reply whose body stops coming: the line says it answered and its reply stopped, not that it did not answer", async () => {
  const srv = await replying("HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n", ['{"rows":['], 10, "hold");
  try {
    const got = await askAdmin(srv.url, "k", "GET", "/usage", undefined, 500);
    expect(got).toBeInstanceOf(NoAnswer);
    const line = noAnswerLine(srv.url, got as NoAnswer);
    expect(line).toBe(`the switchyard instance at ${srv.url} answered (HTTP 200) but its reply stopped coming for 1 s before it was complete; try again later`);
  } finally {
    srv.close();
  }
});

test("a reply cut off by a dropped connection: the line says the connection closed before the reply was complete", async () => {
  const srv = await replying("HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n", ['{"rows":['], 10, "drop");
  try {
    const got = await askAdmin(srv.url, "k", "GET", "/usage", undefined, 5_000);
    expect(got).toBeInstanceOf(NoAnswer);
    const line = noAnswerLine(srv.url, got as NoAnswer);
    expect(line).toStartWith(`the switchyard instance at ${srv.url} answered (HTTP 200) but the connection closed before its reply was complete (`);
  } finally {
    srv.close();
  }
});
