import { lookup } from "node:dns/promises";
import { BlockList, isIP } from "node:net";
import { RewindError } from "./errors.js";

// Its own entry point (@rewind/core/outbound-address): Node's dns and net stay out of what the
// sandbox and the replay engine import.

/**
 * Where Rewind may connect on a tenant's behalf (webhook endpoints). Tenants name the URL, so
 * without a check a webhook would reach the cluster's own services (Postgres, Redis, the cloud's
 * metadata address): loopback, link-local, private, shared (CGNAT), multicast, reserved and
 * unspecified addresses are refused unless the operator's allowlist (REWIND_WEBHOOK_ALLOW: CIDRs,
 * addresses and host names, comma-separated) names them.
 */
const REFUSED_V4 = [
  ["0.0.0.0", 8, "unspecified"],
  ["10.0.0.0", 8, "private"],
  ["100.64.0.0", 10, "shared (CGNAT)"],
  ["127.0.0.0", 8, "loopback"],
  ["169.254.0.0", 16, "link-local"],
  ["172.16.0.0", 12, "private"],
  ["192.0.0.0", 24, "reserved (IETF)"],
  ["192.0.2.0", 24, "reserved (documentation)"],
  ["192.168.0.0", 16, "private"],
  ["198.18.0.0", 15, "reserved (benchmarking)"],
  ["198.51.100.0", 24, "reserved (documentation)"],
  ["203.0.113.0", 24, "reserved (documentation)"],
  ["224.0.0.0", 4, "multicast"],
  ["240.0.0.0", 4, "reserved"],
] as const;
const REFUSED_V6 = [
  ["::", 128, "unspecified"],
  ["::1", 128, "loopback"],
  ["fc00::", 7, "private (unique local)"],
  ["fe80::", 10, "link-local"],
  ["fec0::", 10, "site-local"],
  ["ff00::", 8, "multicast"],
  ["2001:db8::", 32, "reserved (documentation)"],
] as const;

export interface AddressPolicy {
  /** Why an address is refused, or undefined when it may be connected to. */
  refusal(address: string, host: string): string | undefined;
}

/** The policy with the operator's allowlist (REWIND_WEBHOOK_ALLOW), checked when it is read. */
export function addressPolicy(allow: string | undefined, variable = "REWIND_WEBHOOK_ALLOW") {
  const allowed = new BlockList();
  const hosts = new Set<string>();
  for (const raw of (allow ?? "").split(",")) {
    const item = raw.trim().toLowerCase();
    if (item === "") continue;
    const [base, bits] = item.split("/");
    const family = isIP(base!);
    if (family === 0) {
      if (bits !== undefined || !/^[a-z0-9.-]+$/.test(item))
        throw new RewindError(
          "INVALID_INPUT",
          `${variable} has ${JSON.stringify(raw.trim())}, which is neither a CIDR, an address nor a host name: write e.g. 127.0.0.1/32,10.1.0.0/16,hooks.internal`,
        );
      hosts.add(item);
      continue;
    }
    const type = family === 4 ? "ipv4" : "ipv6";
    const prefix = bits === undefined ? (family === 4 ? 32 : 128) : Number(bits);
    if (!Number.isInteger(prefix) || prefix < 0 || prefix > (family === 4 ? 32 : 128))
      throw new RewindError(
        "INVALID_INPUT",
        `${variable} has ${JSON.stringify(raw.trim())}: its prefix length must be 0 to ${family === 4 ? 32 : 128}`,
      );
    allowed.addSubnet(base!, prefix, type);
  }
  return {
    refusal(address: string, host: string): string | undefined {
      if (hosts.has(host.toLowerCase())) return undefined;
      const plain = unmapped(address);
      const family = isIP(plain);
      if (family === 0) return `${address} is not an IP address`;
      const type = family === 4 ? "ipv4" : "ipv6";
      if (allowed.check(plain, type)) return undefined;
      const ranges = family === 4 ? REFUSED_V4 : REFUSED_V6;
      for (const [base, bits, what] of ranges) {
        const one = new BlockList();
        one.addSubnet(base, bits, type);
        if (one.check(plain, type))
          return `${address} is a ${what} address; webhooks are not sent there unless the operator allows it (${variable})`;
      }
      return undefined;
    },
  } satisfies AddressPolicy;
}

/** ::ffff:127.0.0.1 is 127.0.0.1: an IPv4-mapped address is checked as the IPv4 one. */
function unmapped(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return mapped ? mapped[1]! : address;
}

export interface CheckedAddress {
  address: string;
  family: 4 | 6;
}

/**
 * Resolves `host` and checks every address it has (one refused address refuses the host: a name
 * that resolves to a public and a private address would otherwise reach the private one on some
 * attempts). Answers the addresses to connect to; the caller connects to one of these, never
 * resolves again (a second lookup could answer differently: DNS rebinding).
 */
export async function resolveChecked(
  host: string,
  policy: AddressPolicy,
  resolve: (host: string) => Promise<{ address: string; family: number }[]> = (h) =>
    lookup(h, { all: true, verbatim: true }),
): Promise<CheckedAddress[]> {
  const bare = host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host;
  let addresses: { address: string; family: number }[];
  if (isIP(bare) !== 0) addresses = [{ address: bare, family: isIP(bare) }];
  else {
    try {
      addresses = await resolve(bare);
    } catch (error) {
      throw new RewindError(
        "INVALID_INPUT",
        `${bare} does not resolve (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}): check the host name`,
      );
    }
  }
  if (addresses.length === 0)
    throw new RewindError("INVALID_INPUT", `${bare} does not resolve: check the host name`);
  for (const { address } of addresses) {
    const refusal = policy.refusal(address, bare);
    if (refusal !== undefined) throw new RewindError("FORBIDDEN", `${bare}: ${refusal}`);
  }
  return addresses.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
}

/** An endpoint URL a tenant gives: http(s), no credentials, and a host the policy allows. */
export async function checkOutboundUrl(url: string, policy: AddressPolicy): Promise<void> {
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    throw new RewindError("INVALID_INPUT", `url: ${JSON.stringify(url)} is not a URL`, {
      field: "url",
    });
  }
  if (target.protocol !== "http:" && target.protocol !== "https:")
    throw new RewindError("INVALID_INPUT", `url: must be http: or https:, not ${target.protocol}`, {
      field: "url",
    });
  if (target.username !== "" || target.password !== "")
    throw new RewindError(
      "INVALID_INPUT",
      "url: must carry no user or password (authenticate the request by its signature)",
      { field: "url" },
    );
  try {
    await resolveChecked(target.hostname, policy);
  } catch (error) {
    throw new RewindError("INVALID_INPUT", `url: ${(error as Error).message}`, { field: "url" });
  }
}
