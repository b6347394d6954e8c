/**
 * The token savers' size thresholds (SPEC S-1), in a module of their own so the words that describe a
 * saver outcome (pipeline/trace-words.ts, also bundled into the dashboard) can name them without
 * pulling in the rules.
 */

/** Tool results shorter than this many characters (UTF-16 code units) are never touched (SPEC S-1). */
export const MIN_CHARS = 500;
/** A compressed text must be at least this fraction shorter than the original to replace it. */
export const MIN_SAVING = 0.1;
