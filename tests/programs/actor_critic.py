"""Actor-critic (pytorch/examples/reinforcement_learning/actor_critic.py) on a small fixed
environment: a deterministic 1-d corridor written in NumPy (the agent moves left/right and is
rewarded for reaching the goal), a shared-body policy/value network, returns discounted and
normalised, policy loss -log_prob * advantage plus smooth-L1 value loss, Adam.

Held fixed: the environment is deterministic; actions are sampled by inverse CDF from the
policy's probabilities with uniforms from a fixed NumPy seed (Categorical.sample would draw
from each framework's own generator: MT19937 vs Philox); log_prob comes from
torch.distributions.Categorical as in the original.
"""
import argparse
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Categorical


class Corridor:
    """States 0..n-1, start in the middle; reaching n-1 gives +1 and ends the episode."""

    def __init__(self, n=7, max_steps=12):
        self.n, self.max_steps = n, max_steps

    def reset(self):
        self.pos, self.t = self.n // 2, 0
        return self._obs()

    def _obs(self):
        return np.eye(self.n, dtype=np.float32)[self.pos]

    def step(self, action):
        self.pos = int(np.clip(self.pos + (1 if action == 1 else -1), 0, self.n - 1))
        self.t += 1
        done = self.pos == self.n - 1 or self.t >= self.max_steps
        return self._obs(), (1.0 if self.pos == self.n - 1 else -0.01), done


class Policy(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.affine1 = nn.Linear(n, 32)
        self.action_head = nn.Linear(32, 2)
        self.value_head = nn.Linear(32, 1)

    def forward(self, x):
        x = F.relu(self.affine1(x))
        return F.softmax(self.action_head(x), dim=-1), self.value_head(x)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--data", required=True)
    p.add_argument("--init", required=True)
    p.add_argument("--episodes", type=int, default=8)
    p.add_argument("--gamma", type=float, default=0.99)
    args = p.parse_args()

    env = Corridor()
    model = Policy(env.n)
    if os.path.exists(args.init):
        model.load_state_dict(torch.load(args.init))
    else:
        torch.save(model.state_dict(), args.init)
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-2)
    eps = np.finfo(np.float32).eps.item()
    uniforms = np.random.RandomState(0)
    for episode in range(args.episodes):
        state, done = env.reset(), False
        saved, rewards = [], []
        while not done:
            probs, value = model(torch.from_numpy(state))
            m = Categorical(probs)
            u = uniforms.rand()
            action = int(u > probs[0].item())
            saved.append((m.log_prob(torch.tensor(action)), value))
            state, reward, done = env.step(action)
            rewards.append(reward)
        R, returns = 0.0, []
        for r in rewards[::-1]:
            R = r + args.gamma * R
            returns.insert(0, R)
        returns = torch.tensor(returns)
        if len(returns) > 1:
            returns = (returns - returns.mean()) / (returns.std() + eps)
        policy_losses, value_losses = [], []
        for (log_prob, value), R in zip(saved, returns):
            advantage = R - value.item()
            policy_losses.append(-log_prob * advantage)
            value_losses.append(F.smooth_l1_loss(value, torch.tensor([R])))
        optimizer.zero_grad()
        loss = torch.stack(policy_losses).sum() + torch.stack(value_losses).sum()
        loss.backward()
        optimizer.step()
        print(f"step {episode} loss {loss.item():.8f}")
        print(f"episode {episode} length {len(rewards)} return {sum(rewards):.2f}")


if __name__ == "__main__":
    main()
