package dockerapi

// The Engine API's JSON, reduced to the fields gohands sets or reads;
// the names are the API's.

// ContainerConfig is the body of POST /containers/create.
type ContainerConfig struct {
	Image        string              `json:"Image"`
	Cmd          []string            `json:"Cmd,omitempty"`
	Entrypoint   []string            `json:"Entrypoint,omitempty"`
	AttachStdin  bool                `json:"AttachStdin,omitempty"`
	AttachStdout bool                `json:"AttachStdout,omitempty"`
	AttachStderr bool                `json:"AttachStderr,omitempty"`
	OpenStdin    bool                `json:"OpenStdin,omitempty"`
	StdinOnce    bool                `json:"StdinOnce,omitempty"`
	Env          []string            `json:"Env,omitempty"`
	WorkingDir   string              `json:"WorkingDir,omitempty"`
	User         string              `json:"User,omitempty"`
	Labels       map[string]string   `json:"Labels,omitempty"`
	ExposedPorts map[string]struct{} `json:"ExposedPorts,omitempty"`
	StopSignal   string              `json:"StopSignal,omitempty"`
	StopTimeout  *int                `json:"StopTimeout,omitempty"`
	HostConfig   *HostConfig         `json:"HostConfig,omitempty"`
}

// HostConfig is the part of the create body about the host: ports,
// mounts, network, limits.
type HostConfig struct {
	Binds          []string                 `json:"Binds,omitempty"`
	PortBindings   map[string][]PortBinding `json:"PortBindings,omitempty"`
	NetworkMode    string                   `json:"NetworkMode,omitempty"`
	AutoRemove     bool                     `json:"AutoRemove,omitempty"`
	Init           *bool                    `json:"Init,omitempty"`
	NanoCPUs       int64                    `json:"NanoCpus,omitempty"`
	Memory         int64                    `json:"Memory,omitempty"`
	MemorySwap     int64                    `json:"MemorySwap,omitempty"`
	PidsLimit      *int64                   `json:"PidsLimit,omitempty"`
	Ulimits        []Ulimit                 `json:"Ulimits,omitempty"`
	DeviceRequests []DeviceRequest          `json:"DeviceRequests,omitempty"`
	ExtraHosts     []string                 `json:"ExtraHosts,omitempty"`
	CapDrop        []string                 `json:"CapDrop,omitempty"`
	SecurityOpt    []string                 `json:"SecurityOpt,omitempty"`
	Tmpfs          map[string]string        `json:"Tmpfs,omitempty"`
}

// PortBinding publishes a container port on HostIP:HostPort.
type PortBinding struct {
	HostIP   string `json:"HostIp"`
	HostPort string `json:"HostPort"`
}

// Ulimit is a resource limit of the container's processes.
type Ulimit struct {
	Name string `json:"Name"`
	Soft int64  `json:"Soft"`
	Hard int64  `json:"Hard"`
}

// DeviceRequest asks for devices such as GPUs (`--gpus all` is
// {Driver:"", Count:-1, Capabilities:[["gpu"]]}).
type DeviceRequest struct {
	Driver       string     `json:"Driver,omitempty"`
	Count        int        `json:"Count"`
	DeviceIDs    []string   `json:"DeviceIDs,omitempty"`
	Capabilities [][]string `json:"Capabilities,omitempty"`
}

// ContainerJSON is GET /containers/{id}/json.
type ContainerJSON struct {
	ID    string `json:"Id"`
	Name  string `json:"Name"`
	State struct {
		Status     string `json:"Status"` // created, running, paused, restarting, removing, exited, dead
		Running    bool   `json:"Running"`
		Paused     bool   `json:"Paused"`
		OOMKilled  bool   `json:"OOMKilled"`
		Pid        int    `json:"Pid"`
		ExitCode   int    `json:"ExitCode"`
		Error      string `json:"Error"`
		StartedAt  string `json:"StartedAt"`
		FinishedAt string `json:"FinishedAt"`
	} `json:"State"`
	Config struct {
		Labels map[string]string `json:"Labels"`
	} `json:"Config"`
	NetworkSettings struct {
		Ports map[string][]PortBinding `json:"Ports"`
	} `json:"NetworkSettings"`
}

// ContainerSummary is an item of GET /containers/json.
type ContainerSummary struct {
	ID     string            `json:"Id"`
	Names  []string          `json:"Names"`
	Image  string            `json:"Image"`
	State  string            `json:"State"`
	Status string            `json:"Status"`
	Labels map[string]string `json:"Labels"`
}

// Image is GET /images/{name}/json.
type Image struct {
	ID     string `json:"Id"`
	Size   int64  `json:"Size"`
	Config struct {
		Entrypoint []string          `json:"Entrypoint"`
		Cmd        []string          `json:"Cmd"`
		Labels     map[string]string `json:"Labels"`
	} `json:"Config"`
}
