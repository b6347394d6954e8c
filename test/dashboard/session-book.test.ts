/**
 * The dashboard's session book (src/admin/sessions.ts): bounded, and a flood of keyless sessions (any
 * web page can make a local browser load /dashboard many times) never evicts a browser signed in with
 * a key.
 */
import { expect, test } from "bun:test";
import { MAX_SESSIONS, SESSION_COOKIE, SessionBook } from "../../src/admin/sessions.ts";

const requestWith = (id: string) => new Request("http://127.0.0.1/dashboard", { headers: { cookie: `${SESSION_COOKIE}=${id}` } });

test("keyless sessions beyond the bound evict keyless ones; the signed-in session stays", async () => {
  const book = new SessionBook();
  const signedIn = await book.create("boss", "sy-admin-secret");
  const firstLocal = await book.create("loopback");
  for (let i = 0; i < MAX_SESSIONS + 50; i++) await book.create("loopback");
  expect(book.fromRequest(requestWith(signedIn.id))?.subject).toBe("boss");
  expect(book.fromRequest(requestWith(firstLocal.id))).toBeUndefined();
});

test("signed-in sessions beyond the bound evict the oldest signed-in one", async () => {
  const book = new SessionBook();
  const local = await book.create("loopback");
  const first = await book.create("boss", "sy-admin-secret");
  for (let i = 0; i < MAX_SESSIONS; i++) await book.create("boss", "sy-admin-secret");
  expect(book.fromRequest(requestWith(first.id))).toBeUndefined();
  expect(book.fromRequest(requestWith(local.id))?.subject).toBe("loopback");
});
