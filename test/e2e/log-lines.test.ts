/**
 * The request log's buffer (src/log-lines.ts): the lines that reach stdout are the lines logged, each
 * whole, in order, exactly once, whatever their size and characters, and whether the write finishes at
 * once or later (issue 17: the lines are written from a buffer that is reused between writes).
 */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { LineBuffer } from "../../src/log-lines.ts";
import { linesFor } from "../support/log-lines.ts";

const ROOT = join(import.meta.dir, "../..");

/** A buffer whose writer keeps the views it is given and says when it is done according to `mode`. */
function capture(capacity: number, mode: "at-once" | "later" | "alternate") {
  const written: Uint8Array[] = [];
  const pending: Array<() => void> = [];
  let calls = 0;
  const buf = new LineBuffer((bytes, done) => {
    // The writes keep the order of the calls; a view's bytes are read only when its write is done: a
    // buffer that reused its memory before `done` would show here as other lines' bytes.
    const slot = written.push(new Uint8Array(0)) - 1;
    const finish = () => {
      written[slot] = Uint8Array.from(bytes);
      done();
    };
    const late = mode === "later" || (mode === "alternate" && calls++ % 2 === 1);
    if (late) pending.push(finish);
    else finish();
  }, capacity);
  const settle = () => {
    while (pending.length > 0) pending.shift()!();
  };
  const text = () => Buffer.concat(written).toString("utf8");
  return { buf, settle, text, written };
}

describe("the request log's buffer", () => {
  for (const mode of ["at-once", "later", "alternate"] as const) {
    test(`lines are written whole, in order and once when the write finishes ${mode}`, () => {
      const capacity = 1024;
      const lines = linesFor(3000, capacity, 50);
      const c = capture(capacity, mode);
      for (const [i, line] of lines.entries()) {
        c.buf.push(line);
        // Writes finishing late finish in batches, while later lines are gathered.
        if (i % 97 === 0) c.settle();
      }
      c.buf.flush();
      c.settle();
      expect(c.text()).toBe(lines.join("\n") + "\n");
      // No write splits a line: every write ends with one.
      for (const w of c.written) expect(w.at(-1)).toBe(0x0a);
    });
  }

  test("a line longer than the buffer is written on its own, after the lines before it", () => {
    const c = capture(64, "at-once");
    const long = "é".repeat(100);
    c.buf.push("first");
    c.buf.push(long);
    c.buf.push("last");
    c.buf.flush();
    expect(c.written.map((w) => Buffer.from(w).toString("utf8"))).toEqual(["first\n", long + "\n", "last\n"]);
  });

  test("multi-byte characters that meet the end of the buffer move whole to the next write", () => {
    // "ab€" and its "\n" fill 6 of the 8-byte buffer; the next line ("𝄞", 4 bytes, "x", "\n") does not
    // fit in the 2 left, and "€€a" and its "\n" are exactly the buffer's 8 bytes.
    const c = capture(8, "at-once");
    c.buf.push("ab€");
    c.buf.push("𝄞x");
    c.buf.push("€€a");
    c.buf.push("é");
    c.buf.flush();
    expect(c.written.map((w) => Buffer.from(w).toString("utf8"))).toEqual(["ab€\n", "𝄞x\n", "€€a\n", "é\n"]);
  });

  test("the lines gathered in a burst are written once the burst ends", async () => {
    const c = capture(1024, "at-once");
    c.buf.push("one");
    c.buf.push("two");
    expect(c.written).toHaveLength(0);
    await new Promise((r) => setImmediate(r));
    expect(c.text()).toBe("one\ntwo\n");
  });

  test("through the process's stdout, a pipe, every line arrives intact and in order", async () => {
    // The gateway's own writer (stdoutLineBuffer) in a child process whose stdout is a pipe: ~10 MB of
    // lines, far more than the pipe holds, so the writes meet a full pipe.
    const script = `
      import { stdoutLineBuffer } from ${JSON.stringify(join(ROOT, "src/log-lines.ts"))};
      import { linesFor } from ${JSON.stringify(join(ROOT, "test/support/log-lines.ts"))};
      const buf = stdoutLineBuffer();
      const lines = linesFor(40000, 64 * 1024, 1000);
      let i = 0;
      const burst = () => {
        for (let k = 0; k < 500 && i < lines.length; k++) buf.push(lines[i++]);
        if (i < lines.length) setImmediate(burst);
      };
      burst();
    `;
    const proc = Bun.spawn([process.execPath, "-e", script], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
    const [out, err] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
    expect(err).toBe("");
    expect(await proc.exited).toBe(0);
    const lines = linesFor(40000, 64 * 1024, 1000);
    expect(out.length).toBe(lines.join("\n").length + 1);
    expect(out).toBe(lines.join("\n") + "\n");
  }, 60_000);
});
