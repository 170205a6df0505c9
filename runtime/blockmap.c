/*
 * blockmap.c -- where each block's dense matrix comes from in a sparse
 * Jacobian: shared by the initialization's block-wise pass (initblock.c)
 * and Model Exchange's block-wise solve (me.c).
 *
 * Input: nb blocks, block b's rows and the unknowns (columns) they
 * determine at rows/cols[ptr[b] .. ptr[b+1]), and the CSC pattern of the
 * n x n Jacobian.  Output (DyrtBlockMap): the block of each row, and per
 * block the Jacobian entries of its rows in its own columns -- ent_pos[e]
 * the entry's index in the CSC values, ent_ij[e] its place i + k j in the
 * block's dense k x k matrix (column-major), e in [ent_ptr[b],
 * ent_ptr[b+1]), column by column -- and a_off[b], the offset of that
 * matrix in one array of a_off[nb] doubles.  A block of more than max rows
 * gets no dense matrix; its ent_ij[e] is the entry's row i within the
 * block (for a sparse matrix of its own, initblock.c).
 * O(n + nnz of the blocks' columns); allocated once.
 */
#include <stdlib.h>

#include "dyrt_internal.h"

static void entries(DyrtBlockMap *bm, int nb, const int32_t *ptr, const int32_t *cols, const int *colptr,
                    const int *rowidx, const int *row_local, int max)
{
    int e = 0;
    for (int b = 0; b < nb; b++) {
        bm->ent_ptr[b] = e;
        int k = ptr[b + 1] - ptr[b];
        for (int j = 0; j < k; j++) {
            int z = cols[ptr[b] + j];
            for (int q = colptr[z]; q < colptr[z + 1]; q++)
                if (bm->row_block[rowidx[q]] == b) {
                    bm->ent_pos[e] = q;
                    bm->ent_ij[e++] = row_local[rowidx[q]] + (k <= max ? k * j : 0);
                }
        }
        bm->a_off[b + 1] = bm->a_off[b] + (k <= max ? k * k : 0);
    }
    bm->ent_ptr[nb] = e;
}

int dyrt_block_map(DyrtBlockMap *bm, int n, int nb, const int32_t *ptr, const int32_t *rows,
                   const int32_t *cols, const int *colptr, const int *rowidx, int max)
{
    int nnz = colptr[n];
    *bm = (DyrtBlockMap){0};
    bm->row_block = dyrt_calloc((size_t)n + 1, sizeof(int));
    bm->ent_ptr = dyrt_calloc((size_t)nb + 1, sizeof(int));
    bm->ent_pos = dyrt_calloc((size_t)nnz + 1, sizeof(int));
    bm->ent_ij = dyrt_calloc((size_t)nnz + 1, sizeof(int));
    bm->a_off = dyrt_calloc((size_t)nb + 1, sizeof(int));
    int *row_local = dyrt_calloc((size_t)n + 1, sizeof(int));
    if (!bm->row_block || !bm->ent_ptr || !bm->ent_pos || !bm->ent_ij || !bm->a_off || !row_local) {
        free(row_local);
        return -1;
    }
    for (int b = 0; b < nb; b++)
        for (int k = ptr[b]; k < ptr[b + 1]; k++) {
            bm->row_block[rows[k]] = b;
            row_local[rows[k]] = k - ptr[b];
        }
    entries(bm, nb, ptr, cols, colptr, rowidx, row_local, max);
    free(row_local);
    return 0;
}

void dyrt_block_map_free(DyrtBlockMap *bm)
{
    free(bm->row_block);
    free(bm->ent_ptr);
    free(bm->ent_pos);
    free(bm->ent_ij);
    free(bm->a_off);
    *bm = (DyrtBlockMap){0};
}
