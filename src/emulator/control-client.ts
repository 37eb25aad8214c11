import type {
  ActiveFault,
  ClockResponse,
  ProvisionFailureResponse,
  RequestLogEntry,
  RequestSummary,
  ResponseSample,
} from './control.js';
import type { FaultRule } from './faults.js';

/**
 * Typed client of the control API (`/_emulator`), for tests, benchmarks and tooling. Methods
 * throw when the control API answers with an error.
 */
export class EmulatorControlClient {
  /**
   * @param controlUrl `RunningEmulator.controlUrl`
   * @param token `RunningEmulator.token`: the control API wants it as `X-Auth-Token` too
   */
  constructor(
    private readonly controlUrl: string,
    private readonly token: string,
  ) {}

  /** Request log entries after `since` (sequence number). */
  async requests(since?: number): Promise<RequestLogEntry[]> {
    const q = since === undefined ? '' : `?since=${since}`;
    return (await this.call<{ requests: RequestLogEntry[] }>('GET', `/requests${q}`)).requests;
  }

  /** Highest request sequence number so far (use as `since` later). */
  async lastSeq(): Promise<number> {
    return (await this.call<{ lastSeq: number }>('GET', '/requests?since=0')).lastSeq;
  }

  /** Forgets the request log and response samples. */
  async clearRequests(): Promise<void> {
    await this.call('DELETE', '/requests');
  }

  /** Request counts by method + route. */
  async summary(): Promise<RequestSummary> {
    return this.call<RequestSummary>('GET', '/requests/summary');
  }

  /** Last response body per (method, route, status). */
  async responses(): Promise<ResponseSample[]> {
    return (await this.call<{ responses: ResponseSample[] }>('GET', '/responses')).responses;
  }

  /** Adds a fault rule (`times` defaults to 1). */
  async addFault(rule: Omit<FaultRule, 'times'> & { times?: number }): Promise<ActiveFault> {
    return (await this.call<{ faults: ActiveFault[] }>('POST', '/faults', rule)).faults[0]!;
  }

  /** Active fault rules. */
  async faults(): Promise<ActiveFault[]> {
    return (await this.call<{ faults: ActiveFault[] }>('GET', '/faults')).faults;
  }

  async clearFaults(): Promise<void> {
    await this.call('DELETE', '/faults');
  }

  /** Makes provisioning of `hostname` fail with `reason` (now, or for the next such device). */
  async failProvisioning(hostname: string, reason: string): Promise<ProvisionFailureResponse> {
    return this.call<ProvisionFailureResponse>('POST', '/provision-failures', { hostname, reason });
  }

  /**
   * Adds a hardware reservation of `plan` in `metro` to the seeded project (a spare one with
   * `spare: true`); resolves the API's HardwareReservation object.
   */
  async addHardwareReservation(
    plan: string,
    metro: string,
    opts: { spare?: boolean } = {},
  ): Promise<Record<string, unknown> & { id: string }> {
    return this.call('POST', '/hardware-reservations', { plan, metro, ...opts });
  }

  /** Jumps the virtual clock forward. */
  async advanceClock(seconds: number): Promise<ClockResponse> {
    return this.call<ClockResponse>('POST', '/clock', { advanceSeconds: seconds });
  }

  /** Changes the clock speed. */
  async setTimeScale(timeScale: number): Promise<ClockResponse> {
    return this.call<ClockResponse>('POST', '/clock', { timeScale });
  }

  async clock(): Promise<ClockResponse> {
    return this.call<ClockResponse>('GET', '/clock');
  }

  /** Sets (or with null removes) the request cap per second. */
  async setRateLimit(perSecond: number | null): Promise<void> {
    await this.call('PUT', '/rate-limit', { perSecond });
  }

  /** Debug dump of the whole state (token, userdata and root passwords redacted). */
  async state(): Promise<Record<string, unknown>> {
    return this.call<Record<string, unknown>>('GET', '/state');
  }

  private async call<T = void>(method: string, path: string, body?: unknown): Promise<T> {
    const headers: Record<string, string> = { 'x-auth-token': this.token };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(`${this.controlUrl}${path}`, {
      method,
      headers,
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`emulator control ${method} ${path}: ${res.status} ${text}`);
    return (text === '' ? undefined : JSON.parse(text)) as T;
  }
}
