import type { CaptureDetector } from "@rewind/contract";

/**
 * The built-in detectors (docs/capture-policy.md): each a regex of ours, linear on any input
 * (no nested quantifier can backtrack), with an optional check of what it found. They run in
 * this thread, unbounded by time, because they are fixed code, not an operator's text.
 */
interface Detector {
  pattern: RegExp;
  /** Whether a match is really one (a card number's Luhn check); absent: every match is. */
  check?: (match: string) => boolean;
}

export const DETECTORS: Record<CaptureDetector, Detector> = {
  // 13 to 19 digits, optionally grouped by spaces or dashes, passing the Luhn check.
  "card-number": { pattern: /(?<![\d-])\d(?:[ -]?\d){12,18}(?![\d])/g, check: luhn },
  // An HTTP Authorization credential: "Bearer <token>" (RFC 6750's token68), and Basic too.
  "bearer-token": { pattern: /\b(?:Bearer|Basic)[ \t]+[A-Za-z0-9\-._~+/]{8,}=*/gi },
  // Keys whose shape announces them: Stripe, OpenAI / Anthropic, GitHub, Slack, AWS, Google.
  "api-key": {
    pattern:
      /\b(?:(?:sk|pk|rk)_(?:live|test)_[A-Za-z0-9]{10,}|sk-(?:ant-)?[A-Za-z0-9_-]{20,}|gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,}|xox[abprs]-[A-Za-z0-9-]{10,}|AKIA[0-9A-Z]{16}|AIza[0-9A-Za-z_-]{35})/g,
  },
  // A JSON Web Token: three base64url parts, the first two JSON objects ("eyJ").
  jwt: { pattern: /\beyJ[A-Za-z0-9_-]{4,}\.eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]+/g },
  email: {
    pattern:
      /\b[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63})*\.[A-Za-z]{2,24}\b/g,
  },
};

/** The Luhn checksum of a card number's digits (separators ignored). */
export function luhn(text: string): boolean {
  const digits = text.replace(/[ -]/g, "");
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

/** `text` with each detector's matches replaced by its marker; the names of those that hit. */
export function detect(
  text: string,
  detectors: readonly CaptureDetector[],
  hits: Set<string>,
): string {
  let out = text;
  for (const name of detectors) {
    const { pattern, check } = DETECTORS[name];
    pattern.lastIndex = 0;
    out = out.replace(pattern, (match) => {
      if (check !== undefined && !check(match)) return match;
      hits.add(name);
      return textMarker(name);
    });
  }
  return out;
}

/** What replaces a match inside a string or console output. */
export function textMarker(rule: string): string {
  return `[redacted:${rule}]`;
}
