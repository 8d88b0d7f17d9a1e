import { ErrorCode, UnstuckError } from "../errors.js";

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** Namespace names are RFC 1123 labels: lower-case alphanumerics and '-', at most 63 characters. */
export function isNamespaceName(name: string): boolean {
  return name.length > 0 && name.length <= 63 && DNS1123_LABEL.test(name);
}

/** `name` if it is a namespace name (`isNamespaceName`), else an `InvalidName` error saying why. */
export function assertNamespaceName(name: string): string {
  if (!isNamespaceName(name)) {
    throw new UnstuckError(
      ErrorCode.InvalidName,
      `"${name}" is not a valid namespace name: it must be an RFC 1123 label (lower-case letters, digits and '-', ` +
        `starting and ending with a letter or digit, at most 63 characters).`,
      { name },
    );
  }
  return name;
}

/** Most object names are RFC 1123 subdomains: at most 253 characters. */
export function assertObjectName(name: string): string {
  if (name.length === 0 || name.length > 253 || !DNS1123_SUBDOMAIN.test(name)) {
    throw new UnstuckError(
      ErrorCode.InvalidName,
      `"${name}" is not a valid object name: it must be an RFC 1123 subdomain (lower-case letters, digits, '-' and '.', ` +
        `at most 253 characters).`,
      { name },
    );
  }
  return name;
}
