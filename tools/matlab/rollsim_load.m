function r = rollsim_load(filename, varargin)
%ROLLSIM_LOAD  Read a rollsim HDF5 result file into a struct.
%
%   r = rollsim_load('run.h5')
%   r = rollsim_load('run.h5', 'AllowIncomplete', true)
%
%   A file whose root attribute 'completed' is 0 (the run did not finish) is
%   refused with error id 'rollsim:incomplete' unless AllowIncomplete is true.
%
%   Fields of r (a group the file does not have is []):
%     file        the file name
%     provenance  root attributes: format, format_version, software_version,
%                 git_hash, command_line, created_utc, completed, status,
%                 model, title
%     scenario    .toml (the input text), .resolved ("key = value" lines)
%     trajectory  one field per dataset, e.g. r.trajectory.time, r.trajectory.theta1
%     events      one field per dataset; events.kind is a cell array of char
%     summary     attributes of /summary (termination, t_final, ...)
%     solver      attributes of /solver (method, rtol, atol, n_steps, ...)
%     linear      eigenvalues_real, eigenvectors_real, A, B, C, D, ...,
%                 and the substruct frequency_response
%     sweep       one field per column; string columns are cell arrays
%     growth      mode (cell), epsilon, predicted, measured, rel_error
%
%   Every group struct (trajectory, events, linear, sweep, growth and
%   subgroups) also has the fields
%     units         field name -> 'unit' attribute of the dataset
%     descriptions  field name -> 'description' attribute of the dataset
%     roles         field name -> 'role' attribute of the dataset (what the
%                   signal is: 'state', 'rate', 'output', 'energy.total',
%                   'work.input', 'dissipation', 'contact.gap', ...; see
%                   docs/python.md, "Signal roles")
%     contacts      field name -> 'contact' attribute (a contact quantity's contact)
%     ledger        field name -> 'ledger' attribute: the sign (+1, -1) the
%                   signal enters the energy ledger E + D with; E + D is the sum
%                   of ledger * column over these fields, or the field whose
%                   role is 'energy.ledger' when there is one
%     names         field name -> dataset name in the file (names that are not
%                   valid MATLAB names, such as the sweep column 'initial.x',
%                   are changed by matlab.lang.makeValidName: 'initial_x')
%     attributes    the attributes of the group itself
%
%   ORIENTATION
%   rollsim writes 2-D datasets from C in row-major order: the element in row
%   i, column j (0-based) is dataset[i, j], which is also what h5py shows.
%   MATLAB is column-major and h5read reverses the dimensions, so h5read
%   returns the TRANSPOSE: an HDF5 dataset of n rows and m columns comes back
%   as an m-by-n array M with M(j+1, i+1) = dataset[i, j].  This loader
%   transposes every 2-D dataset back, so that in r:
%     r.linear.A(i, j)                  = A[i-1, j-1]  (as in C and h5py)
%     r.linear.B, C, D                  the same rule (B is n-by-inputs, ...)
%     r.linear.eigenvectors_real(:, j)  is eigenvector j (paired with
%                                       eigenvalues_real(j) + 1i*eigenvalues_imag(j))
%   so A*V = V*diag(lambda) holds with
%     V = r.linear.eigenvectors_real + 1i*r.linear.eigenvectors_imag;
%     lambda = r.linear.eigenvalues_real + 1i*r.linear.eigenvalues_imag;
%   1-D datasets (every trajectory signal, event and sweep column) are
%   returned as column vectors.  Datasets of more than two dimensions get all
%   dimensions reversed back (permute).
%
%   Note: tools/h5tomat writes a .mat file with the same orientation (no
%   transposing needed after load()).

  p = inputParser;
  addParameter(p, 'AllowIncomplete', false);
  parse(p, varargin{:});
  allow_incomplete = logical(p.Results.AllowIncomplete);

  if exist(filename, 'file') ~= 2
    error('rollsim:missing', '%s: no such file', filename);
  end
  info = h5info(filename);

  r = struct();
  r.file = filename;
  r.provenance = attributes_to_struct(info.Attributes);

  completed = 0;
  if isfield(r.provenance, 'completed')
    completed = double(r.provenance.completed);
  end
  if ~completed && ~allow_incomplete
    status = 'unknown';
    if isfield(r.provenance, 'status')
      status = r.provenance.status;
    end
    error('rollsim:incomplete', ...
          ['%s: incomplete result file (completed = 0, status = "%s"); ' ...
           'use rollsim_load(file, ''AllowIncomplete'', true) to read it anyway'], ...
          filename, status);
  end

  r.scenario = struct('toml', '', 'resolved', '');
  g = find_group(info, '/scenario');
  if ~isempty(g)
    a = attributes_to_struct(g.Attributes);
    if isfield(a, 'toml'),     r.scenario.toml = a.toml;         end
    if isfield(a, 'resolved'), r.scenario.resolved = a.resolved; end
  end

  tables = {'trajectory', 'events', 'linear', 'sweep', 'growth'};
  for k = 1:numel(tables)
    g = find_group(info, ['/' tables{k}]);
    if isempty(g)
      r.(tables{k}) = [];
    else
      r.(tables{k}) = read_group(filename, g);
    end
  end

  attribute_groups = {'summary', 'solver'};
  for k = 1:numel(attribute_groups)
    g = find_group(info, ['/' attribute_groups{k}]);
    if isempty(g)
      r.(attribute_groups{k}) = [];
    else
      r.(attribute_groups{k}) = attributes_to_struct(g.Attributes);
    end
  end
end


function g = find_group(info, path)
% The h5info entry of the group with the full name PATH, or [].
  g = [];
  for k = 1:numel(info.Groups)
    if strcmp(info.Groups(k).Name, path)
      g = info.Groups(k);
      return;
    end
  end
end


function s = read_group(filename, g)
% Every dataset of group G as a field (orientation: see the help text),
% subgroups as nested structs.
  s = struct();
  units = struct();
  descriptions = struct();
  roles = struct();
  contacts = struct();
  ledger = struct();
  names = struct();
  for k = 1:numel(g.Datasets)
    d = g.Datasets(k);
    field = matlab.lang.makeValidName(d.Name);
    s.(field) = read_dataset(filename, [g.Name '/' d.Name], d);
    names.(field) = d.Name;
    a = attributes_to_struct(d.Attributes);
    if isfield(a, 'unit'),        units.(field) = a.unit;               end
    if isfield(a, 'description'), descriptions.(field) = a.description; end
    if isfield(a, 'role'),        roles.(field) = a.role;               end
    if isfield(a, 'contact'),     contacts.(field) = a.contact;         end
    if isfield(a, 'ledger'),      ledger.(field) = double(a.ledger);    end
  end
  for k = 1:numel(g.Groups)
    parts = strsplit(g.Groups(k).Name, '/');
    field = matlab.lang.makeValidName(parts{end});
    s.(field) = read_group(filename, g.Groups(k));
    names.(field) = parts{end};
  end
  s.units = units;
  s.descriptions = descriptions;
  s.roles = roles;
  s.contacts = contacts;
  s.ledger = ledger;
  s.names = names;
  s.attributes = attributes_to_struct(g.Attributes);
end


function v = read_dataset(filename, path, d)
% One dataset with the C/h5py index meaning restored.
  dims = d.Dataspace.Size;
  rank = numel(dims);
  is_string = strcmp(d.Datatype.Class, 'H5T_STRING');
  if any(dims == 0)
    if is_string
      v = cell(0, 1);
    else
      v = zeros(0, 1);
    end
    return;
  end

  v = h5read(filename, path);

  if is_string
    if ischar(v)
      % Fixed-length strings come back as a char matrix, one string per
      % column; make it one string per row first.
      if size(v, 2) == prod(dims) && size(v, 1) ~= prod(dims)
        v = v.';
      end
      v = cellstr(v);
    end
    if iscell(v)
      for k = 1:numel(v)
        v{k} = strip_nul(v{k});
      end
      v = v(:);
    end
    return;
  end

  if rank <= 1
    v = v(:);                       % 1-D: column vector
  elseif rank == 2
    v = v.';                        % undo h5read's transpose: v(i,j) = dataset[i-1, j-1]
  else
    v = permute(v, ndims(v):-1:1);  % reverse all dimensions back
  end
end


function s = attributes_to_struct(attrs)
% Attributes as struct fields; strings as char rows without trailing NULs.
  s = struct();
  for k = 1:numel(attrs)
    name = matlab.lang.makeValidName(attrs(k).Name);
    val = attrs(k).Value;
    if iscell(val) && numel(val) == 1
      val = val{1};                 % variable-length string attribute
    end
    if ischar(val) && isvector(val)
      val = strip_nul(reshape(val, 1, []));
    elseif iscell(val)
      for j = 1:numel(val)
        if ischar(val{j}), val{j} = strip_nul(val{j}); end
      end
    end
    s.(name) = val;
  end
end


function t = strip_nul(t)
  while ~isempty(t) && t(end) == char(0)
    t(end) = [];
  end
end
