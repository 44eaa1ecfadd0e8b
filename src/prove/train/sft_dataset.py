"""VERL's SFT dataset for PROVE conversations (``data.custom_cls`` of the SFT baseline).

    data.custom_cls.path=pkg://prove.train.sft_dataset data.custom_cls.name=ProveSFTDataset

A thin subclass of VERL's ``MultiTurnSFTDataset`` over ``prove.rows.sft_row`` rows: messages
go back to plain chat messages (null keys dropped, tool-call arguments as objects) and ``tools``
(a JSON string per row) to the normalised schemas the RL rollout offers, so SFT and GRPO render
the same prompts. Kept apart from ``prove.train.dataset``: VERL 0.9.1's SFT module imports Qwen2-VL
internals of the transformers it pins (< 5.11; the project pins 5.9.0), so importing it is costlier.
"""

from __future__ import annotations

from verl.utils.dataset.multiturn_sft_dataset import MultiTurnSFTDataset

from prove.rows import decode_messages
from prove.train.schema import row_schemas

__all__ = ["ProveSFTDataset"]


class ProveSFTDataset(MultiTurnSFTDataset):
    """``MultiTurnSFTDataset`` over PROVE SFT rows (see the module doc)."""

    def _read_files_and_process(self) -> None:
        super()._read_files_and_process()
        if self.tools is not None:
            self.tools = [row_schemas(t) or None for t in self.tools]

    def _build_messages(self, example: dict) -> list:
        return decode_messages(super()._build_messages(example))
