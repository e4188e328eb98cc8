/**
 * Silences the functions' Powertools loggers (import first): the fault tests make handlers fail on
 * purpose, and their error logs would bury the test output.
 */
process.env.POWERTOOLS_LOG_LEVEL = 'SILENT';
