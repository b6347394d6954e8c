/**
 * Prints `N passed, N failed` from a JUnit XML report (bun test prints no such line). Skipped and
 * todo tests count as neither. Exits 1 when the report is missing or unreadable.
 *
 * Usage: bun scripts/junit-summary.ts REPORT [BUN_EXIT_STATUS]. An error outside any test (a test file
 * that fails to load, an unhandled error between tests: bun prints "# Unhandled error between tests"
 * and exits 1) is in no `<testcase>` of the report: when bun's exit status says it failed and the report
 * holds no failed test, that is counted as one failure and said, so the line never reads "0 failed" for
 * a run that failed.
 */
export {};

/** The `passed` / `failed` counts of a JUnit report's text; `bunStatus` is bun test's exit status. */
export function junitCounts(xml: string, bunStatus = 0): { passed: number; failed: number; outsideTests: boolean } {
  let passed = 0;
  let failed = 0;
  for (const m of xml.matchAll(/<testcase\b[^>]*?(\/>|>([\s\S]*?)<\/testcase>)/g)) {
    const inner = m[2] ?? "";
    if (/<(failure|error)\b/.test(inner)) failed++;
    else if (/<skipped\b/.test(inner)) continue;
    else passed++;
  }
  const outsideTests = bunStatus !== 0 && failed === 0;
  return { passed, failed: outsideTests ? 1 : failed, outsideTests };
}

if (import.meta.main) {
  const file = process.argv[2] ?? "test-results/junit.xml";
  const status = Number(process.argv[3] ?? 0) || 0;
  let xml: string;
  try {
    xml = await Bun.file(file).text();
  } catch {
    console.log("0 passed, 1 failed");
    console.error(`no JUnit report at ${file}`);
    process.exit(1);
  }
  const c = junitCounts(xml, status);
  if (c.outsideTests) console.error(`bun test exited ${status} with no failed test in ${file}: an error outside the tests (a test file that did not load, or an unhandled error between tests; see "# Unhandled error" above), counted as one failure`);
  console.log(`${c.passed} passed, ${c.failed} failed`);
}
