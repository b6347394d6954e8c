/**
 * Audio formats OpenAI takes as `input_audio.format`: `wav` and `mp3` only (platform.openai.com/docs/
 * api-reference/chat/create, ChatCompletionContentPartInputAudio). Gemini names audio by MIME subtype
 * (`audio/mpeg`, `audio/x-wav`, `audio/ogg`, `audio/flac`, `audio/aac`, …), so a hub audio part's
 * `format` can be one OpenAI refuses with a 400. Pure.
 */

const MP3 = new Set(["mp3", "mpeg", "mpeg3", "mpga", "x-mp3", "x-mpeg", "x-mpeg-3"]);
const WAV = new Set(["wav", "wave", "x-wav", "vnd.wave", "x-pn-wav"]);

/**
 * A hub audio `format` (a name or a MIME subtype, any case) → the `input_audio.format` OpenAI takes for
 * it (`"mp3"` for mp3/mpeg/mpga, `"wav"` for wav/wave), or undefined when OpenAI takes no such audio
 * (ogg, flac, aac, opus, webm, m4a, aiff, pcm, …).
 */
export function openaiAudioFormat(format: string): "wav" | "mp3" | undefined {
  const f = format.trim().toLowerCase();
  if (MP3.has(f)) return "mp3";
  if (WAV.has(f)) return "wav";
  return undefined;
}
