"""Training budgets. The trainer that consumes them arrives with the tiny-Shakespeare pipeline."""
from dataclasses import dataclass


@dataclass(frozen=True)
class TrainConfig:
    steps: int
    batch_size: int
    lr: float
    warmup: int = 0
    weight_decay: float = 0.0
    betas: tuple[float, float] = (0.9, 0.999)

    def predictions(self, block_size: int) -> int:
        """Next-token predictions made in training: steps x batch x window."""
        return self.steps * self.batch_size * block_size


# S-IT: "3000 passi di AdamW a 1e-3 con un batch di 64"
SHAKESPEARE_FULL = TrainConfig(steps=3000, batch_size=64, lr=1e-3)
