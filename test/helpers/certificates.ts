/**
 * A private CA and a server certificate for 127.0.0.1 (and localhost) signed by it, made with
 * openssl in `dir` for two days: `ca.crt`, `srv.crt` and `srv.key`, for a test's TLS server and
 * the client told to trust that CA.
 */
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";

export interface ServerCertificate {
  readonly caFile: string;
  readonly certFile: string;
  readonly keyFile: string;
}

export function makeServerCertificate(dir: string, caName = "unstuck-test-ca"): ServerCertificate {
  const openssl = (args: readonly string[]): void => {
    execFileSync("openssl", args, { cwd: dir, stdio: "ignore" });
  };
  const days = ["-days", "2"];
  openssl([
    "req",
    "-x509",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-keyout",
    "ca.key",
    "-out",
    "ca.crt",
    ...days,
    "-subj",
    `/CN=${caName}`,
  ]);
  openssl([
    "req",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-keyout",
    "srv.key",
    "-out",
    "srv.csr",
    "-subj",
    "/CN=127.0.0.1",
  ]);
  writeFileSync(join(dir, "ext"), "subjectAltName=IP:127.0.0.1,DNS:localhost\n");
  openssl([
    "x509",
    "-req",
    "-in",
    "srv.csr",
    "-CA",
    "ca.crt",
    "-CAkey",
    "ca.key",
    "-CAcreateserial",
    "-out",
    "srv.crt",
    ...days,
    "-extfile",
    "ext",
  ]);
  return { caFile: join(dir, "ca.crt"), certFile: join(dir, "srv.crt"), keyFile: join(dir, "srv.key") };
}
