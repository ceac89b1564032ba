"""DistributedSampler gives each rank the same indices as PyTorch's, epoch by epoch."""
import pytest

import ember

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("n,replicas,shuffle,drop_last,seed", [
    (10, 3, True, False, 0), (10, 3, True, True, 5), (7, 4, False, False, 0),
    (1000, 2, True, False, 42), (5, 8, True, False, 1), (1, 2, True, True, 0),
])
def test_same_indices_as_torch(n, replicas, shuffle, drop_last, seed):
    data = list(range(n))
    for epoch in (0, 1, 3):
        for rank in range(replicas):
            e = ember.utils.data.DistributedSampler(data, replicas, rank, shuffle, seed,
                                                    drop_last)
            t = torch.utils.data.DistributedSampler(data, replicas, rank, shuffle, seed,
                                                    drop_last)
            e.set_epoch(epoch)
            t.set_epoch(epoch)
            assert list(e) == list(t) and len(e) == len(t)


def test_invalid_rank():
    with pytest.raises(ValueError, match="Invalid rank 3"):
        ember.utils.data.DistributedSampler(range(4), num_replicas=2, rank=3)


def test_works_in_a_dataloader():
    ds = ember.utils.data.TensorDataset(ember.arange(10.0))
    s = ember.utils.data.DistributedSampler(ds, 2, 1, shuffle=False)
    batches = [b[0].tolist() for b in ember.utils.data.DataLoader(ds, batch_size=2, sampler=s)]
    assert batches == [[1.0, 3.0], [5.0, 7.0], [9.0]]
