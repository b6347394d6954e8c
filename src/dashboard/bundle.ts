/**
 * Bundles the dashboard's browser code (src/dashboard/client) with Bun.build and prints the result as
 * JSON on stdout: `{ "files": [{ "name": "app-3f2a….js", "type": "text/javascript", "text": "…" }] }`.
 * Run as a child process by the macro of src/dashboard/assets-macro.ts (Bun.build cannot run inside a
 * macro while the bundler waits for it). Exits 1 with the build log on stderr when the build fails.
 */
import { join } from "node:path";

/** One built file. */
export interface BuiltFile {
  /** File name with its content hash, served under /dashboard/assets/. */
  name: string;
  /** Content-Type. */
  type: string;
  text: string;
}

/** Builds the client bundle (minified, browser target, content-hashed names). */
export async function buildClient(): Promise<BuiltFile[]> {
  const result = await Bun.build({
    entrypoints: [join(import.meta.dir, "client/main.tsx")],
    target: "browser",
    minify: true,
    naming: { entry: "[name]-[hash].[ext]", chunk: "[name]-[hash].[ext]", asset: "[name]-[hash].[ext]" },
    define: { "process.env.NODE_ENV": '"production"' },
  });
  if (!result.success) throw new Error(result.logs.map(String).join("\n"));
  const files: BuiltFile[] = [];
  for (const out of result.outputs) {
    const name = out.path.split("/").pop()!;
    const type = name.endsWith(".js") ? "text/javascript; charset=utf-8" : name.endsWith(".css") ? "text/css; charset=utf-8" : out.type;
    files.push({ name, type, text: await out.text() });
  }
  return files;
}

if (import.meta.main) {
  try {
    process.stdout.write(JSON.stringify({ files: await buildClient() }));
  } catch (e) {
    console.error(e instanceof Error ? e.message : String(e));
    process.exit(1);
  }
}
