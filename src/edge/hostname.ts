import { ErrorCode, UnstuckError } from "../errors.js";

/** RFC 1123 host name: labels of letters, digits and '-', at most 63 each, 253 in all. */
const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

export function assertHostname(text: string): string {
  const h = text.trim().toLowerCase().replace(/\.$/, "");
  const labels = h.split(".");
  if (h.length === 0 || h.length > 253 || labels.length < 2 || !labels.every((l) => LABEL.test(l))) {
    throw new UnstuckError(
      ErrorCode.BadInput,
      `"${text.slice(0, 80)}" is not a DNS host name: use letters, digits, '-' and dots, e.g. test.example.com.`,
      { name: text.slice(0, 80) },
    );
  }
  return h;
}
