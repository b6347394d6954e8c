/**
 * Hot reload (SPEC 2.3): real files in a temp dir; a valid change is reported, an invalid one goes to
 * onError and the old configuration stays in force; editors that replace the file are followed;
 * SIGHUP forces a re-read.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, renameSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConfigError, type ConfigWatcher, loadConfigFile, type RuntimeConfig, watchConfig } from "../../src/config/index.ts";
import { until } from "../support/until.ts";

const cleanups: (() => void)[] = [];
afterEach(() => {
  while (cleanups.length) cleanups.pop()!();
});

/** A temp folder with config.yaml, a watcher on it, and everything it reported. */
function setup(initial: string, env: Record<string, string> = {}) {
  const dir = mkdtempSync(join(tmpdir(), "switchyard-watch-"));
  const path = join(dir, "config.yaml");
  writeFileSync(path, initial);
  // The caller's own first load, as `start` does.
  let current: RuntimeConfig = loadConfigFile(path, env);
  const reloads: RuntimeConfig[] = [];
  const infos: ({ restored: boolean } | undefined)[] = [];
  const errors: unknown[] = [];
  const stop: ConfigWatcher = watchConfig(
    path,
    {
      onReload: (cfg, _text, info) => {
        reloads.push(cfg);
        infos.push(info);
        current = cfg;
      },
      onError: (err) => errors.push(err),
    },
    { env, debounceMs: 50 },
  );
  cleanups.push(() => {
    stop();
    rmSync(dir, { recursive: true, force: true });
  });
  return { dir, path, reloads, infos, errors, stop, current: () => current };
}

/** Polls for what the watcher reports; the deadline is far beyond the debounce so that a loaded machine does not fail it. */
const waitFor = (cond: () => boolean, ms = 15_000) => until(cond, ms, "the watcher", 10);

/**
 * For the checks that an event is ignored, where the watcher under test gives no signal (its debounced
 * read of an unchanged file reports nothing): a second watcher, on marker.yaml in the same folder with
 * the same debounce, started after the first. `bump()` writes marker.yaml and waits until that watcher
 * has reported it. An event the first watcher got before that write set its debounce earlier (each
 * watcher is handed the folder's events in the order they were started), so its read (and any report)
 * came before the marker's: once the marker is seen, the check has looked, however slow the machine (a
 * fixed 250 ms could be spent before the debounce fired). marker.yaml is first written by `bump()`: an
 * earlier write would leave an event the second watcher may read late, with the bumped text, too early.
 */
function marker(dir: string) {
  const path = join(dir, "marker.yaml");
  let port = 1;
  const seen: number[] = [];
  const stop = watchConfig(path, { onReload: (cfg) => seen.push(cfg.server.port), onError: () => {} }, { debounceMs: 50, sighup: false });
  cleanups.push(stop);
  return {
    async bump() {
      writeFileSync(path, `server: { port: ${++port} }\n`);
      const want = port;
      await waitFor(() => seen.includes(want));
    },
  };
}

describe("watchConfig", () => {
  test("a valid change is reported once, after the debounce", async () => {
    const w = setup("server: { port: 1001 }\n");
    await Bun.sleep(50); // let the watcher start
    writeFileSync(w.path, "server: { port: 1002 }\n");
    writeFileSync(w.path, "server: { port: 1003 }\n"); // a burst: one reload
    await waitFor(() => w.reloads.length >= 1);
    expect(w.current().server.port).toBe(1003);
    // A later change, waited for: a second report of the burst would have come before it (not a fixed
    // 250 ms after the first, which a loaded machine could spend before the debounce fired).
    writeFileSync(w.path, "server: { port: 1004 }\n");
    await waitFor(() => w.current().server.port === 1004);
    expect(w.reloads.map((c) => c.server.port)).toEqual([1003, 1004]);
    expect(w.errors).toEqual([]);
  });

  test("an invalid new file calls onError and keeps the old config; a later fix is picked up", async () => {
    const w = setup("server: { port: 2001 }\n");
    await Bun.sleep(50);
    writeFileSync(w.path, "server: { port: 2002, prot: 1 }\n");
    await waitFor(() => w.errors.length >= 1);
    const err = w.errors[0] as ConfigError;
    expect(err).toBeInstanceOf(ConfigError);
    expect(err.issues.map((i) => i.path)).toEqual(["server.prot"]);
    expect(w.reloads).toEqual([]);
    expect(w.current().server.port).toBe(2001); // the old config stays in force

    writeFileSync(w.path, "server: { port: 2003 }\n");
    await waitFor(() => w.reloads.length >= 1);
    expect(w.current().server.port).toBe(2003);
  });

  test("after a rejected edit, the file put back exactly as it is in force is reported as restored (try19 D2: it was ignored as unchanged)", async () => {
    const w = setup("server: { port: 2101 }\n");
    await Bun.sleep(50);
    writeFileSync(w.path, "server: { port: 2101\n"); // a YAML typo
    await waitFor(() => w.errors.length >= 1);
    expect(w.reloads).toEqual([]);
    writeFileSync(w.path, "server: { port: 2101 }\n"); // the typo fixed: the running content again
    await waitFor(() => w.reloads.length >= 1);
    expect(w.infos).toEqual([{ restored: true }]);
    expect(w.current().server.port).toBe(2101);
    // once restored, the same text again is ignored as before; a real change is not "restored"
    const m = marker(w.dir);
    writeFileSync(w.path, "server: { port: 2101 }\n");
    await m.bump();
    expect(w.reloads.length).toBe(1);
    writeFileSync(w.path, "server: { port: 2102 }\n");
    await waitFor(() => w.reloads.length >= 2);
    expect(w.infos[1]).toBeUndefined();
    expect(w.errors.length).toBe(1);
  });

  test("a config path that is a symlink: an edit of the file it points at (in another folder) is picked up, also after the link is repointed (try19 D8: only the link's folder was watched)", async () => {
    const real = mkdtempSync(join(tmpdir(), "switchyard-watch-target-"));
    const other = mkdtempSync(join(tmpdir(), "switchyard-watch-target2-"));
    cleanups.push(() => {
      rmSync(real, { recursive: true, force: true });
      rmSync(other, { recursive: true, force: true });
    });
    writeFileSync(join(real, "config.yaml"), "server: { port: 2201 }\n");
    const w = setup("");
    unlinkSync(w.path);
    symlinkSync(join(real, "config.yaml"), w.path);
    await waitFor(() => w.reloads.length >= 1); // the link itself appeared in the watched folder
    expect(w.current().server.port).toBe(2201);
    writeFileSync(join(real, "config.yaml"), "server: { port: 2202 }\n"); // the target edited in place
    await waitFor(() => w.current().server.port === 2202);
    // editors that save by renaming over the target are followed in its folder too
    writeFileSync(join(real, ".config.yaml.tmp"), "server: { port: 2203 }\n");
    renameSync(join(real, ".config.yaml.tmp"), join(real, "config.yaml"));
    await waitFor(() => w.current().server.port === 2203);
    // the link repointed (seen in the link's folder), then the new target edited
    writeFileSync(join(other, "config.yaml"), "server: { port: 2204 }\n");
    symlinkSync(join(other, "config.yaml"), join(w.dir, "next.yaml"));
    renameSync(join(w.dir, "next.yaml"), w.path);
    await waitFor(() => w.current().server.port === 2204);
    writeFileSync(join(other, "config.yaml"), "server: { port: 2205 }\n");
    await waitFor(() => w.current().server.port === 2205);
    expect(w.errors).toEqual([]);
  });

  test("an editor that writes a temp file and renames it over the original is followed", async () => {
    const w = setup("server: { port: 3001 }\n");
    await Bun.sleep(50);
    const tmp = join(w.dir, ".config.yaml.swp");
    writeFileSync(tmp, "server: { port: 3002 }\n");
    renameSync(tmp, w.path);
    await waitFor(() => w.reloads.length >= 1);
    expect(w.current().server.port).toBe(3002);
    // And again: the watcher still works after the inode changed.
    writeFileSync(tmp, "server: { port: 3003 }\n");
    renameSync(tmp, w.path);
    await waitFor(() => w.current().server.port === 3003);
  });

  test("delete and recreate: the new file is picked up", async () => {
    const w = setup("server: { port: 4001 }\n");
    await Bun.sleep(50);
    unlinkSync(w.path);
    await Bun.sleep(20);
    writeFileSync(w.path, "server: { port: 4002 }\n");
    await waitFor(() => w.current().server.port === 4002);
  });

  test("a file deleted for good is an error; the old config stays", async () => {
    const w = setup("server: { port: 5001 }\n");
    await Bun.sleep(50);
    unlinkSync(w.path);
    await waitFor(() => w.errors.length >= 1);
    expect((w.errors[0] as ConfigError).issues[0].message).toContain("not found");
    expect(w.current().server.port).toBe(5001);
  });

  test("other files in the folder do not trigger a reload; identical content is ignored", async () => {
    const w = setup("server: { port: 6001 }\n");
    const m = marker(w.dir);
    await Bun.sleep(50);
    writeFileSync(join(w.dir, "other.yaml"), "x: 1\n");
    writeFileSync(w.path, "server: { port: 6001 }\n"); // same bytes
    await m.bump(); // (marker.yaml is another file too)
    expect(w.reloads).toEqual([]);
    expect(w.errors).toEqual([]);
  });

  test("SIGHUP re-reads even when the file is unchanged (e.g. an env: secret changed)", async () => {
    const env: Record<string, string> = { K: "first" };
    const w = setup("accounts: [{ id: a, provider: openai, api_key: env:K }]\n", env);
    env.K = "second";
    process.kill(process.pid, "SIGHUP");
    await waitFor(() => w.reloads.length >= 1);
    expect(w.current().accounts[0].credential).toEqual({ type: "api_key", apiKey: "second" });
  });

  test("reload() forces a re-read, like SIGHUP", async () => {
    const env: Record<string, string> = { K: "one" };
    const w = setup("accounts: [{ id: a, provider: openai, api_key: env:K }]\n", env);
    env.K = "two";
    w.stop.reload();
    expect(w.reloads).toHaveLength(1);
    expect(w.current().accounts[0].credential).toEqual({ type: "api_key", apiKey: "two" });
  });

  test("after stop() nothing is reported", async () => {
    const w = setup("server: { port: 7001 }\n");
    const m = marker(w.dir);
    await Bun.sleep(50);
    w.stop();
    w.stop(); // idempotent
    writeFileSync(w.path, "server: { port: 7002 }\n");
    await m.bump();
    expect(w.reloads).toEqual([]);
    expect(w.errors).toEqual([]);
  });

  test("an onReload that throws is reported to onError and the watcher keeps going", async () => {
    const dir = mkdtempSync(join(tmpdir(), "switchyard-watch-"));
    const path = join(dir, "config.yaml");
    writeFileSync(path, "server: { port: 8001 }\n");
    const errors: unknown[] = [];
    const ports: number[] = [];
    const stop = watchConfig(
      path,
      {
        onReload: (cfg) => {
          ports.push(cfg.server.port);
          if (cfg.server.port === 8002) throw new Error("boom");
        },
        onError: (e) => errors.push(e),
      },
      { debounceMs: 50, sighup: false },
    );
    cleanups.push(() => {
      stop();
      rmSync(dir, { recursive: true, force: true });
    });
    await Bun.sleep(50);
    writeFileSync(path, "server: { port: 8002 }\n");
    await waitFor(() => errors.length === 1);
    writeFileSync(path, "server: { port: 8003 }\n");
    await waitFor(() => ports.includes(8003));
    expect((errors[0] as Error).message).toBe("boom");
  });
});
