/** What the API answered, as the CLI says it: a Status as an error, a claim as one line. */
import { CliError, type Answer } from './http.ts';

/** A Status answer (or any non-2xx) as a CliError: the message, then each field cause. */
export function failure(answer: Answer): CliError {
  const body = answer.body;
  if (body && typeof body === 'object' && body.kind === 'Status') {
    const causes: { field: string; message: string }[] = body.details?.causes ?? [];
    // A lone cause that the message already says is not repeated.
    const lone = causes.length === 1 ? causes[0]! : undefined;
    const repeated =
      lone && (body.message === lone.message || body.message === `${lone.field}: ${lone.message}`);
    return new CliError(
      `${body.message} (${body.code} ${body.reason})`,
      repeated ? [] : causes.map((cause) => `  ${cause.field}: ${cause.message}`),
    );
  }
  return new CliError(`the API answered ${answer.status}: ${String(JSON.stringify(body)).slice(0, 200)}`);
}

export function allocatedOf(claim: Record<string, any>): Record<string, any> | undefined {
  return (claim.status?.conditions ?? []).find((c: Record<string, any>) => c.type === 'Allocated');
}

export function claimLine(claim: Record<string, any>): string {
  const allocated = allocatedOf(claim);
  const ref = claim.spec.poolRef;
  const name = `claim/${claim.metadata.name}`;
  if (allocated?.status === 'True') {
    return `${name}: ${claim.status.value} from ${ref.kind} ${ref.name} (${claim.status.allocationRef.kind} ${claim.status.allocationRef.name})`;
  }
  return `${name}: waiting: ${allocated?.reason ?? 'Unknown'}: ${allocated?.message ?? ''}`;
}
