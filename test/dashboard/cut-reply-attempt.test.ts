/**
 * Found in review (2026-12-07), fixed the same day: the call view's "The reply was cut after it started" (src/dashboard/client/
 * pages/call-outcome.tsx CutReply) names the error of the last attempt that HAS one, walking back past
 * the served attempt when it carries none (a trace recorded before 2026-12-04, which did not keep the
 * served attempt's error, or any served attempt without one). With a fallback before the commit point
 * (attempt #1 answered 500, attempt #2 served the 200 and was then cut) it says the client's stream
 * ended with attempt #1's 500 error on a.example's target: an error the client never saw. After the
 * commit point no other attempt is tried (SPEC 6.4), so only the last attempt is the served one; with
 * no error there it should say the trace does not name the error.
 *
 * Renders the component without a browser: the dashboard's .tsx files are compiled here with Preact's
 * classic JSX factory, and the VNode tree is read as text.
 */
import { plugin } from "bun";
import { expect, test } from "bun:test";

plugin({
  name: "dashboard-preact-jsx",
  setup(build) {
    // Preact's classic JSX factory (h, Fragment): what the dashboard's build gives these files, without its bundler
    const tx = new Bun.Transpiler({ loader: "tsx", tsconfig: { compilerOptions: { jsx: "react", jsxFactory: "__h", jsxFragmentFactory: "__Fragment" } } });
    build.onLoad({ filter: /src\/dashboard\/client\/.*\.tsx$/ }, async ({ path }) => ({
      contents: `import { h as __h, Fragment as __Fragment } from "preact";\n${tx.transformSync(await Bun.file(path).text())}`,
      loader: "js",
    }));
  },
});

/** Imported by a name tsc does not follow: the root tsconfig leaves the dashboard's browser code (and its JSX) out. */
const CALL_OUTCOME: string = "../../src/dashboard/client/pages/call-outcome.tsx";

/** The text of a Preact VNode tree (component functions are called). */
function text(v: unknown): string {
  if (v == null || typeof v === "boolean") return "";
  if (typeof v === "string" || typeof v === "number") return String(v);
  if (Array.isArray(v)) return v.map(text).join("");
  const n = v as { type: unknown; props: { children?: unknown } };
  if (typeof n.type === "function") return text((n.type as (p: unknown) => unknown)(n.props));
  return text(n.props?.children);
}

test("a cut reply whose served (last) attempt has no error recorded does not name an earlier attempt's error", async () => {
  const { CutReply } = (await import(CALL_OUTCOME)) as { CutReply: (p: { status: number; trace: never }) => unknown };
  const trace = {
    attempts: [
      { n: 1, target: "a.example/m", status: 500, row: "server_error", error: "500 an earlier attempt's internal error" },
      { n: 2, target: "b.example/m", status: 200 }, // served; then cut (its error not in this trace)
    ],
  };
  const said = text(CutReply({ status: 200, trace: trace as never }));
  expect(said).toContain("The reply was cut after it started");
  // before the fix: "... then its stream ended with an error (attempt #1, a.example/m):500 an earlier attempt's internal error"
  expect(said).not.toContain("500 an earlier attempt's internal error");
  expect(said).not.toContain("attempt #1");
  expect(said).toContain("which this trace does not name");
});

test("control: the served attempt's own error is named", async () => {
  const { CutReply } = (await import(CALL_OUTCOME)) as { CutReply: (p: { status: number; trace: never }) => unknown };
  const trace = { attempts: [{ n: 1, target: "a.example/m", status: 500, error: "500 first" }, { n: 2, target: "b.example/m", status: 200, error: "stream cut: upstream closed" }] };
  const said = text(CutReply({ status: 200, trace: trace as never }));
  expect(said).toContain("(attempt #2, b.example/m)");
  expect(said).toContain("stream cut: upstream closed");
});
