package api

// PushMaintenance answers GET and POST /api/v1/system/maintenance.
type PushMaintenance struct {
	Enabled bool `json:"enabled"`
	// MaintenanceMode repeats Enabled under Queen's name.
	MaintenanceMode  bool  `json:"maintenanceMode"`
	BufferedMessages int64 `json:"bufferedMessages"`
	// BufferHealthy is false after a failed append or replay.
	BufferHealthy bool `json:"bufferHealthy"`
}

// PopMaintenance answers GET and POST /api/v1/system/maintenance/pop.
type PopMaintenance struct {
	Enabled bool `json:"enabled"`
	// PopMaintenanceMode repeats Enabled under Queen's name.
	PopMaintenanceMode bool `json:"popMaintenanceMode"`
}

// MaintenanceSwitch is the body of both POSTs; enabled is required.
type MaintenanceSwitch struct {
	Enabled *bool `json:"enabled"`
}
