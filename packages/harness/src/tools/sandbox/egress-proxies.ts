/**
 * The runs' egress proxies (issue 26 item 4, ADR-0171, ADR-0173): a conversation whose workspace
 * allows hosts (`workspace(body, { network: [hosts] })`, carried on the Submission as `network`)
 * gets one proxy on a Unix socket, bound into each of its sandboxes; it is closed when the
 * conversation is forgotten or the Harness closes. The allow list is the first Submission's —
 * the seat, like its working directory, is built once (§7.2).
 */
import { type EgressProxy, type EgressResolver, startEgressProxy } from "@jr2/sandbox";

/** One egress proxy per conversation. */
export interface EgressProxies {
  /** The conversation's proxy for `allow`, started on first use. */
  open(iid: string, allow: readonly string[]): Promise<EgressProxy>;
  /** Closes the conversation's proxy, if any. */
  close(iid: string): Promise<void>;
  /** Closes every proxy (the Harness closes). */
  closeAll(): Promise<void>;
  /** How many are open (tests). */
  readonly size: number;
}

/** The store; `resolve` replaces the system resolver (a test serves a loopback host by name). */
export function createEgressProxies(resolve?: EgressResolver): EgressProxies {
  const open = new Map<string, Promise<EgressProxy>>();
  const close = async (iid: string) => {
    const proxy = open.get(iid);
    open.delete(iid);
    await (await proxy?.catch(() => undefined))?.close();
  };
  return {
    open(iid, allow) {
      let proxy = open.get(iid);
      if (!proxy) {
        proxy = startEgressProxy({ allow: [...allow], ...(resolve ? { resolve } : {}) });
        open.set(iid, proxy);
      }
      return proxy;
    },
    close,
    async closeAll() {
      await Promise.all([...open.keys()].map(close));
    },
    get size() {
      return open.size;
    },
  };
}
