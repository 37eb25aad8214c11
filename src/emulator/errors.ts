/**
 * API errors raised by route handlers. The server's error handler turns them into the API's
 * error bodies: `{"errors": [...]}`, except 401 which the API answers with `{"error": "..."}`.
 */
export class ApiError extends Error {
  readonly status: number;
  readonly errors: string[];
  readonly headers: Record<string, string>;

  constructor(status: number, errors: string | string[], headers: Record<string, string> = {}) {
    const list = Array.isArray(errors) ? errors : [errors];
    super(list.join('; '));
    this.name = 'ApiError';
    this.status = status;
    this.errors = list;
    this.headers = headers;
  }
}

/** The body the real API sends with a 500 (observed text). */
export const INTERNAL_ERROR_MESSAGE =
  "Oh snap, something went wrong! We've logged the error and will take a look - please reach out to us if you continue having trouble.";

/** 404 with the API's usual text. */
export function notFound(): ApiError {
  return new ApiError(404, 'Not found');
}

/** 422 with one or more validation messages. */
export function unprocessable(errors: string | string[]): ApiError {
  return new ApiError(422, errors);
}

/** The JSON body for an error status: `{error}` for 401, `{errors}` otherwise. */
export function errorBody(
  status: number,
  errors: string[],
): { error: string } | { errors: string[] } {
  return status === 401 ? { error: errors.join('; ') } : { errors };
}

/**
 * `startEmulator` with a `projectId` other than the one its state file was seeded with: the
 * emulated machines belong to that project. Callers map it to their own message (the embedded
 * emulator names the config's `project_id`).
 */
export class StateProjectMismatchError extends Error {
  constructor(
    readonly statePath: string,
    /** The project the state file holds. */
    readonly stateProjectId: string,
    /** The project asked for. */
    readonly projectId: string,
  ) {
    super(
      `state file ${statePath} holds project ${stateProjectId}, not ${projectId}; use another state file or drop the project id`,
    );
    this.name = 'StateProjectMismatchError';
  }
}
