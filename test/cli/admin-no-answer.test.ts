/**
 * The CLI's call of the admin API when the instance accepts the connection and then sends nothing (a
 * team-operator tryout: a stalled database held the admin API; `switchyard keys list` waited about two
 * minutes and then said "no running switchyard instance answers … (left by an instance that has
 * stopped)" of an instance that was running). It now gives up after its bound and says the instance
 * did not answer in time; a refused connection still reads as no instance answering.
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
  const line = noAnswerLine(url, (got as NoAnswer).ms);
  expect(line).toContain(`the switchyard instance at ${url} accepted the connection but did not answer within`);
  expect(line).not.toContain("no running switchyard instance");
});

test("nothing listening: undefined (no instance answers), at once", async () => {
  const closed = createServer();
  await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
  const port = (closed.address() as { port: number }).port;
  await new Promise<void>((resolve) => closed.close(() => resolve()));
  expect(await askAdmin(`http://127.0.0.1:${port}`, "k", "GET", "/keys", undefined, 5_000)).toBeUndefined();
});
