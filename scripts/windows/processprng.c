/* bcryptprimitives.dll's ProcessPrng, for Wine versions that lack it (Wine 8): Rust's
 * standard library for Windows imports it to seed its hash maps, and an exe that cannot
 * resolve it does not start (status c0000135). Built with mingw-w64 by
 * scripts/windows/wine-setup.sh and copied into the Wine prefix's system32. */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length)
{
    while (length > 0) {
        ULONG chunk = length > 0x10000000 ? 0x10000000 : (ULONG)length;
        if (!SystemFunction036(data, chunk))
            return FALSE;
        data += chunk;
        length -= chunk;
    }
    return TRUE;
}
