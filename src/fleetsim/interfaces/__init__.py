"""The interfaces real fleet software speaks, one subpackage per protocol: `vda5050` (VDA 5050
over MQTT). Each has its message models, a network side and an adapter to the simulation."""
