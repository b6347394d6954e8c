/**
 * A throwaway PostgreSQL server for the tests that need one (SPEC D-2): Debian's `postgresql` package
 * (scripts/test installs it when missing), `initdb` into a temp dir, a free port on 127.0.0.1, the unix
 * socket in the temp dir, trust authentication for the one local user, stopped by PID at the end. Run as
 * root, the cluster belongs to the `postgres` system user (initdb refuses root) and is started through
 * `runuser`. Nothing here touches a server the machine already runs.
 */
import { spawnSync } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** A running throwaway server. */
export interface TestPostgres {
  /** `postgres://switchyard@127.0.0.1:PORT/DB` of the database made by {@link TestPostgres.createDatabase} or the default one. */
  url: string;
  port: number;
  /** The postmaster's pid while it runs. */
  pid(): number | undefined;
  /** A new empty database; returns its URL. */
  createDatabase(name: string): Promise<string>;
  /** Fast shutdown (SIGINT to the postmaster), waiting until it has exited. */
  stop(): Promise<void>;
  /** Starts the same cluster again on the same port (after {@link stop}). */
  start(): Promise<void>;
  /** Stops the server and removes its directory. Idempotent. */
  destroy(): Promise<void>;
}

const USER = "switchyard";

/** The directory holding `initdb` and `postgres`, newest major version first; undefined when not installed. */
export function postgresBinDir(): string | undefined {
  const root = "/usr/lib/postgresql";
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((v) => existsSync(join(root, v, "bin", "initdb")))
    .sort((a, b) => Number(b) - Number(a));
  return versions.length ? join(root, versions[0]!, "bin") : undefined;
}

/** A port on 127.0.0.1 nobody listens on right now. */
async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}

function isRoot(): boolean {
  return typeof process.getuid === "function" && process.getuid() === 0;
}

/** Runs a PostgreSQL program as the cluster's owner (the `postgres` user when we are root). */
function run(bin: string, args: string[]): { status: number | null; out: string } {
  const cmd = isRoot() ? ["runuser", "-u", "postgres", "--", bin, ...args] : [bin, ...args];
  const r = spawnSync(cmd[0]!, cmd.slice(1), { encoding: "utf8" });
  return { status: r.status, out: `${r.stdout ?? ""}${r.stderr ?? ""}` };
}

const live = new Set<TestPostgres>();
let exitHook = false;

/**
 * Creates and starts a throwaway cluster.
 * @throws Error naming the fix when PostgreSQL is not installed or the server does not start.
 */
export async function startPostgres(): Promise<TestPostgres> {
  const bin = postgresBinDir();
  if (!bin) {
    throw new Error("PostgreSQL is not installed: scripts/test installs Debian's postgresql package (apt-get install -y postgresql)");
  }
  const dir = mkdtempSync(join(tmpdir(), "sy-pg-"));
  const data = join(dir, "data");
  if (isRoot()) {
    const ids = spawnSync("id", ["-u", "postgres"], { encoding: "utf8" });
    const gids = spawnSync("id", ["-g", "postgres"], { encoding: "utf8" });
    chownSync(dir, Number(ids.stdout.trim()), Number(gids.stdout.trim()));
  }
  const init = run(join(bin, "initdb"), ["-D", data, "-U", USER, "-A", "trust", "-E", "UTF8", "--no-sync", "--no-instructions"]);
  if (init.status !== 0) throw new Error(`initdb failed: ${init.out.slice(-2000)}`);
  // `let`: the first start takes another free port if this one is taken before PostgreSQL binds it.
  let port = await freePort();
  let postmasterPid: number | undefined;

  const pidFromFile = (): number | undefined => {
    try {
      return Number(readFileSync(join(data, "postmaster.pid"), "utf8").split("\n")[0]);
    } catch {
      return undefined;
    }
  };

  const start = async () => {
    const r = run(join(bin, "pg_ctl"), [
      "start",
      "-D",
      data,
      "-w",
      "-t",
      "30",
      "-l",
      join(dir, "server.log"),
      "-o",
      `-p ${port} -c listen_addresses=127.0.0.1 -k ${dir} -c fsync=off -c full_page_writes=off -c max_connections=200`,
    ]);
    if (r.status !== 0) {
      let logText = "";
      try {
        logText = readFileSync(join(dir, "server.log"), "utf8").slice(-2000);
      } catch {}
      throw new Error(`postgres did not start: ${r.out.slice(-1000)} ${logText}`);
    }
    postmasterPid = pidFromFile();
  };

  const stop = async () => {
    const pid = postmasterPid;
    postmasterPid = undefined;
    if (!pid) return;
    try {
      process.kill(pid, "SIGINT");
    } catch {
      return;
    }
    for (let i = 0; i < 300; i++) {
      try {
        process.kill(pid, 0);
      } catch {
        return;
      }
      await Bun.sleep(50);
    }
    try {
      process.kill(pid, "SIGKILL");
    } catch {}
  };

  // Another process (tests run in parallel on a shared machine) can bind the free port between
  // freePort() and PostgreSQL's bind: then the server log says "Address already in use" and the
  // first start is tried again on a new port (restarts keep the port the URL names).
  for (let attempt = 1; ; attempt++) {
    try {
      await start();
      break;
    } catch (e) {
      if (attempt >= 5 || !/Address already in use|could not bind/i.test(String(e))) throw e;
      port = await freePort();
    }
  }
  const base = `postgres://${USER}@127.0.0.1:${port}`;
  const pg: TestPostgres = {
    url: `${base}/postgres`,
    port,
    pid: () => postmasterPid,
    async createDatabase(name) {
      const r = run(join(bin, "psql"), ["-h", "127.0.0.1", "-p", String(port), "-U", USER, "-d", "postgres", "-v", "ON_ERROR_STOP=1", "-c", `CREATE DATABASE "${name}"`]);
      if (r.status !== 0) throw new Error(`CREATE DATABASE failed: ${r.out}`);
      return `${base}/${name}`;
    },
    stop,
    start,
    async destroy() {
      if (!live.delete(pg)) return;
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  live.add(pg);
  if (!exitHook) {
    exitHook = true;
    // A test run that dies without its afterAll still stops its servers (by PID).
    process.on("exit", () => {
      for (const p of live) {
        const pid = p.pid();
        if (pid) {
          try {
            process.kill(pid, "SIGQUIT");
          } catch {}
        }
      }
    });
  }
  return pg;
}
