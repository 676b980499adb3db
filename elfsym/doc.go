// Package elfsym resolves probe locations to sites: ELF and DWARF symbols
// of executables and shared libraries (symtab, dynsym, PLT stubs, Go's
// pclntab, separate debug info), the load layout of a running process from
// /proc/PID/maps, and instruction-boundary checks of every probed address.
package elfsym
