"""tacit inside other tools' loops: a transformers Trainer callback that probes the model being
trained at each evaluation (tacit.integrations.trainer.ProbeCallback). Each integration imports
its tool only when it is used."""
