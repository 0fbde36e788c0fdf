#pragma once
// PLUME_SCALAR_LOOPS marks a function whose loops run over a contact's three
// rows, a few dofs or a short ancestor run: GCC's auto-vectorisation would
// spend more on their prologue and epilogue than it saves.
#if defined(__GNUC__) && !defined(__clang__)
#define PLUME_SCALAR_LOOPS __attribute__((optimize("no-tree-vectorize")))
#else
#define PLUME_SCALAR_LOOPS
#endif
