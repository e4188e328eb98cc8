/** The release function's operations (dispatch.ts): claim delete. */
import { deleteClaim } from '../../service/operations/claims.ts';
import type { OperationTable } from './dispatch.ts';

export const RELEASE_OPERATIONS: OperationTable = {
  deleteClaim: () => deleteClaim,
};
