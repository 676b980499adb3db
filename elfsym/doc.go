// Package elfsym resolves probe locations to sites: ELF and DWARF symbols
// of executables and shared libraries (symtab, dynsym, PLT stubs, Go's
// pclntab, separate debug info), the load layout of a running process from
// /proc/PID/maps, and instruction-boundary checks of every probed address.
//
// Known limits: IFUNC symbols (libc's strlen...) resolve to the chosen
// implementation only in a running process (before it runs, the site is the
// resolver, marked Site.IFunc: the engines resolve again at the program's
// entry point); Go assembly (ABI0) functions are reported as ABIGoRegs like
// every Go function; $LIB and $PLATFORM in DT_RPATH/DT_RUNPATH are not
// expanded; the vDSO is not listed. Parsed objects are cached for the life
// of the process, keyed by file identity.
package elfsym
