/**
 * The dashboard's browser code has its own tsconfig (DOM types, Preact JSX; src/dashboard/client):
 * the root `tsc -p .` leaves it out, so this test type-checks it.
 */
import { expect, test } from "bun:test";
import { join } from "node:path";
import { ROOT } from "../support/instance.ts";

test("src/dashboard/client type-checks", () => {
  const r = Bun.spawnSync([join(ROOT, "node_modules/.bin/tsc"), "--noEmit", "-p", "src/dashboard/client"], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
  expect(r.stdout.toString() + r.stderr.toString()).toBe("");
  expect(r.exitCode).toBe(0);
}, 60_000);
