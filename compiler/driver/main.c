/*
 * main.c -- the dyadc executable: everything is in the driver library
 * (cli.c: the command line; pipeline.c: the phases), so tests can run it.
 */
#include "driver.h"

int main(int argc, char **argv) { return driver_main(argc, argv); }
