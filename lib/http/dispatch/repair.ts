/** The repair function's operations (dispatch.ts): the sweep of one namespace, on demand. */
import { repairNamespace } from '../../service/operations/repair.ts';
import type { OperationTable } from './dispatch.ts';

export const REPAIR_OPERATIONS: OperationTable = {
  repair: () => repairNamespace,
};
